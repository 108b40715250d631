#pragma once
// The tensors every executor reads and fills, and the inputs runs start from. Dense, one
// sequence in token order: [token][head][dim], row-major.
#include <cstdint>
#include <vector>

#include "tessera/core/problem.hpp"
#include <string>

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

// Host memory of a run's tensors (batch 1, doubles): inputs and outputs, the executor's
// per-rank copies and inboxes, and the reference's own outputs to compare with: three sets of
// every tensor. In bytes, as a double so that it cannot wrap.
double estimate_host_tensor_bytes(const Problem& problem);
// UserError with the estimate and the limit (core/resource_limits.hpp) when it does not fit.
void require_host_tensor_memory(const Problem& problem);

// Seeded random Q, K, V, dO (uniform in [-1, 1]) for a problem (batch 1).
AttentionTensors random_inputs(const Problem& problem, uint64_t seed);

}  // namespace tessera::backend
