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

// Multi-head attention over the whole sequence, forward: 32 heads of 128 with a KV head each,
// the shape whose volumes and times the closed forms of the cost-model suites count.
inline Problem mha_full_forward(int64_t seq_len) {
  Problem problem = llama_like(seq_len, MaskKind::full, Pass::forward);
  problem.kv_heads = 32;
  return problem;
}

}  // namespace tessera::test
