#pragma once
// Problems several suites share.
#include <cstdint>

#include "tessera/core/problem.hpp"

namespace tessera::test {

// A Llama-like layer: 32 query heads and 8 KV heads (grouped-query attention) of dimension 128.
inline Problem llama_like(int64_t seq_len, MaskKind mask, Pass pass) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = 32;
  problem.kv_heads = 8;
  problem.head_dim = 128;
  problem.head_dim_v = 128;
  problem.mask.kind = mask;
  problem.pass = pass;
  return problem;
}

}  // namespace tessera::test
