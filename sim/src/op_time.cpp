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
  auto flops = [&](double pairs) {
    return heads * (op.pass == Pass::forward ? forward_flops_per_head(problem, pairs) : backward_flops_per_head(problem, pairs));
  };
  double seconds = 0;
  for (const auto& block : schedule.blocks_of(op)) {
    const auto query_tokens = static_cast<double>(grid.chunk_tokens(block.q_chunk));
    const auto key_tokens = static_cast<double>(grid.chunk_tokens(block.kv_chunk));
    seconds += block_compute_s(gpu, problem.dtype, op.pass, query_tokens, key_tokens,
                               flops(static_cast<double>(grid.pairs(block.q_chunk, block.kv_chunk))),
                               flops(query_tokens * key_tokens));
  }
  return seconds;
}

}  // namespace tessera::sim
