#pragma once
// The CPU reference executor: runs any checked schedule with real tensors, one rank after
// another in the schedule's execution order (a deterministic interpreter), so every test run
// can check that a schedule computes attention. Inputs are rounded to the problem's dtype;
// blocks are computed in fp32 (online-softmax forward with partial O and LSE, FlashAttention-2
// backward from LSE and delta = rowsum(dO * O)); partial outputs merge by LSE weights and
// gradient partials by sums.
//
// Data model notes: an O transfer carries its LSE with it (LSE items are bookkeeping only), and
// each rank's own chunk of Q, K, V, dO and Stats is present from the start.
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/analysis.hpp"

namespace tessera::backend {

// Dense tensors of one sequence in token order: [token][head][dim], row-major.
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

// Dense attention in fp64: O and LSE, and when `backward`, dQ, dK, dV. The mask and GQA follow
// the problem. This is the reference everything is compared with.
void dense_attention(const Problem& problem, AttentionTensors& tensors, bool backward);

// Runs the schedule: fills out/lse (forward) and d_q/d_k/d_v (backward) of `tensors`, whose
// inputs must be set. Backward-only problems need tensors.out and tensors.lse set (the
// forward's results), from which each owner forms its Stats.
void execute_on_cpu(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
                    AttentionTensors& tensors);

// The same, recording when each op started and finished (seconds from the start).
struct ExecutionRecord;
void execute_on_cpu(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
                    AttentionTensors& tensors, ExecutionRecord& record);

// Largest absolute difference between two tensors of equal size.
double max_abs_error(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tessera::backend
