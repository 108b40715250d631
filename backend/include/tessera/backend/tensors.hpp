#pragma once
// The tensors every executor reads and fills, and the inputs runs start from. Dense, one
// sequence in token order: [token][head][dim], row-major.
#include <cstdint>
#include <vector>

#include "tessera/core/problem.hpp"

namespace tessera::backend {

struct AttentionTensors {
  int64_t tokens = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  std::vector<double> q, k, v, d_out;       // inputs
  std::vector<double> out, lse;             // forward outputs
  std::vector<double> d_q, d_k, d_v;        // backward outputs
};

// Rounds to the dtype's precision (round to nearest even on the mantissa; inputs here are small
// and normal, so the exponent range does not matter). Every executor rounds inputs this way.
double round_to_dtype(DType dtype, double value);

// Seeded random Q, K, V, dO (uniform in [-1, 1]) for a problem (batch 1).
AttentionTensors random_inputs(const Problem& problem, uint64_t seed);

}  // namespace tessera::backend
