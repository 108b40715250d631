#include <cstdint>

#include "tessera/core/data_size.hpp"
#include "tessera/sim/simulator.hpp"

namespace tessera::sim {

double op_compute_s(const Schedule& schedule, const BlockGrid& grid, const Op& op, const GpuProfile& gpu) {
  const Problem& problem = schedule.problem;
  if (op.kind == OpKind::merge) {
    int64_t bytes = 0;
    for (const auto& item : schedule.items_of(op)) bytes += item_bytes(schedule, grid, item);
    return 3.0 * static_cast<double>(bytes) / gpu.hbm_bytes_per_s;  // read both partials, write the sum
  }
  const double heads = static_cast<double>(query_heads_per_group(problem, schedule.head_groups) * problem.batch);
  const double peak = gpu.peak_flops_per_s(problem.dtype);
  double seconds = 0;
  for (const auto& block : schedule.blocks_of(op)) {
    double pairs = static_cast<double>(grid.pairs(block.q_chunk, block.kv_chunk));
    double flops = heads * (op.pass == Pass::forward ? forward_flops_per_head(problem, pairs)
                                                     : backward_flops_per_head(problem, pairs));
    double efficiency = gpu.efficiency(static_cast<double>(grid.chunk_tokens(block.q_chunk)),
                                       static_cast<double>(grid.chunk_tokens(block.kv_chunk)));
    const double rate = op.pass == Pass::forward ? 1.0 : gpu.backward_rate_ratio;
    seconds += flops / (peak * efficiency * rate) + gpu.launch_overhead_s;
  }
  return seconds;
}

}  // namespace tessera::sim
