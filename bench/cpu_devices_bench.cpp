// What two busy CPU devices deliver against one, as the speed reference of `tessera validate`
// times it: one rank computing one causal diagonal block alone, and one rank on each of two
// cores computing one such block at once (backend::independent_blocks), in pairs, one after the
// other. Prints per batch of pairs the busy-devices figure three ways: 2 x alone / makespan by
// lower quartiles (what validate compares with the calibrated curve), the median of the pairs'
// ratios (what calibrate fits), and 2 x alone / the longer of the two ops' own durations (the
// devices' throughput with the ranks' start-up left out); and the median gap between the two
// ranks' first op starts. The three agree when the executor starts every rank's ops together
// (cpu_executor.cpp); a thread started late shows as a gap and as a makespan figure below the
// ops' own (docs/measurements/cpu-rounds/2026-12-05-start-barrier).
// Usage: tessera_bench_cpu_devices [side_tokens (256)] [pairs per batch (13)] [batches (6)]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_timing.hpp"
#include "tessera/backend/calibration.hpp"
#include "tessera/backend/cpu/cpu_executor.hpp"
#include "tessera/backend/tensors.hpp"

using namespace tessera;

namespace {

// Validate's default speed reference shape: 4 heads of 32, bf16.
Problem reference_shape() {
  Problem problem;
  problem.heads = problem.kv_heads = 4;
  problem.head_dim = problem.head_dim_v = 32;
  problem.dtype = DType::bf16;
  return problem;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t side = argc > 1 ? std::atoll(argv[1]) : 256;
  const int pairs = argc > 2 ? std::atoi(argv[2]) : 13;
  const int batches = argc > 3 ? std::atoi(argv[3]) : 6;
  if (side < 16 || side > 4096 || pairs < 4 || pairs > 1000 || batches < 1 || batches > 100) {
    std::fprintf(stderr, "usage: tessera_bench_cpu_devices [side_tokens 16..4096] [pairs per batch 4..1000] [batches 1..100]\n");
    return 2;
  }
  if (backend::cpu_cores() < 2) {
    std::printf("tessera_bench_cpu_devices: not run: this process may use %d core (two wanted)\n", backend::cpu_cores());
    return 1;
  }
  auto executor = backend::make_cpu_executor(2);
  const schedules::CheckedSchedule one = backend::independent_blocks(reference_shape(), side, 1);
  const schedules::CheckedSchedule two = backend::independent_blocks(reference_shape(), side, 2);
  const backend::AttentionTensors one_inputs = backend::random_inputs(one.schedule().problem, 7);
  const backend::AttentionTensors two_inputs = backend::random_inputs(two.schedule().problem, 7);
  std::printf("two busy CPU devices against one: a %lld-token causal diagonal block per rank, %d pairs per line\n",
              static_cast<long long>(side), pairs);
  for (int batch = 0; batch < batches; ++batch) {
    std::vector<double> alone_s, makespan_s, longest_op_s, start_gap_s, pair_ratio;
    for (int pair = 0; pair <= pairs; ++pair) {  // the first pair warms up
      backend::AttentionTensors tensors = one_inputs;
      backend::ExecutionRecord alone;
      executor->execute(one, tensors, alone);
      tensors = two_inputs;
      backend::ExecutionRecord busy;
      executor->execute(two, tensors, busy);
      if (pair == 0) continue;
      const double first_start_s = std::min(busy.op_start_s[0], busy.op_start_s[1]);
      alone_s.push_back(alone.op_finish_s[0] - alone.op_start_s[0]);
      makespan_s.push_back(busy.makespan_s - first_start_s);
      longest_op_s.push_back(std::max(busy.op_finish_s[0] - busy.op_start_s[0], busy.op_finish_s[1] - busy.op_start_s[1]));
      start_gap_s.push_back(std::abs(busy.op_start_s[0] - busy.op_start_s[1]));
      pair_ratio.push_back(2 * alone_s.back() / makespan_s.back());
    }
    const double alone = backend::lower_quartile(alone_s), makespan = backend::lower_quartile(makespan_s),
               longest = backend::lower_quartile(longest_op_s);
    std::printf("  alone %.3f ms; two at once: by makespan %.2fx (pairs' median %.2fx), by the ops' own times %.2fx; "
                "start gap median %.3f ms\n",
                alone * 1e3, 2 * alone / makespan, bench::median(pair_ratio), 2 * alone / longest, bench::median(start_gap_s) * 1e3);
  }
  return 0;
}
