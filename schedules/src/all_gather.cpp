// Llama-3 context parallelism: one all-gather of K and V over all GPUs, then every GPU computes
// its own query rows against the whole sequence. The gather is exposed on purpose (it keeps
// arbitrary masks simple, and with GQA K/V are small next to the quadratic compute). The
// backward pass gathers K/V again (they were freed) and reduce-scatters the dK/dV partials to
// their owners; dQ never leaves.
#include "tessera/schedules/generators.hpp"

#include <numeric>

namespace tessera::schedules {

namespace {
std::vector<int32_t> everyone(int32_t gpus) {
  std::vector<int32_t> members(static_cast<size_t>(gpus));
  std::iota(members.begin(), members.end(), 0);
  return members;
}

int32_t gather_kv(ScheduleBuilder& builder, Pass pass, int32_t gpus) {
  int32_t gather = builder.begin_collective(CollectiveKind::all_gather, pass, everyone(gpus));
  for (int32_t src = 0; src < gpus; ++src) {
    const DataItem kv{DataKind::KV, 0, src};
    for (int32_t dst = 0; dst < gpus; ++dst)
      if (dst != src) builder.add_transfer(gather, src, dst, {&kv, 1});
  }
  return gather;
}

std::vector<BlockRef> row_blocks(const BlockGrid& grid, int32_t row) {
  std::vector<BlockRef> blocks;
  for (int32_t column = 0; column < grid.chunks(); ++column)
    if (grid.has_work(row, column)) blocks.push_back(BlockRef{0, row, column});
  return blocks;
}
}  // namespace

Schedule generate_all_gather(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  ScheduleBuilder builder("all-gather", to_string(grid.layout()), problem, grid.layout(), gpus);
  const int32_t compute = builder.stream("compute");
  const int32_t comm = builder.stream("collective");
  if (gpus == 1) {
    if (problem.has_forward()) builder.compute(0, Pass::forward, row_blocks(grid, 0), compute);
    if (problem.has_backward()) builder.compute(0, Pass::backward, row_blocks(grid, 0), compute);
    return builder.finish();
  }
  if (problem.has_forward()) {
    builder.set_pass(Pass::forward);
    int32_t gather = gather_kv(builder, Pass::forward, gpus);
    for (int32_t gpu = 0; gpu < gpus; ++gpu) {
      builder.collective_op(gpu, comm, gather);
      builder.compute(gpu, Pass::forward, row_blocks(grid, gpu), compute);
    }
  }
  if (problem.has_backward()) {
    builder.set_pass(Pass::backward);
    int32_t gather = gather_kv(builder, Pass::backward, gpus);
    // dK/dV partials exist only where a GPU computed a block of that column.
    int32_t scatter = builder.begin_collective(CollectiveKind::reduce_scatter, Pass::backward, everyone(gpus));
    for (int32_t src = 0; src < gpus; ++src)
      for (int32_t owner = 0; owner < gpus; ++owner)
        if (owner != src && grid.has_work(src, owner)) {
          const DataItem partial{DataKind::dKV, 0, owner};
          builder.add_transfer(scatter, src, owner, {&partial, 1});
        }
    for (int32_t gpu = 0; gpu < gpus; ++gpu) {
      builder.collective_op(gpu, comm, gather);
      builder.compute(gpu, Pass::backward, row_blocks(grid, gpu), compute);
      builder.collective_op(gpu, comm, scatter);
      bool receives = false;
      for (int32_t src = 0; src < gpus; ++src) receives = receives || (src != gpu && grid.has_work(src, gpu));
      if (receives) builder.merge(gpu, compute, {DataItem{DataKind::dKV, 0, gpu}});
    }
  }
  return builder.finish();
}

}  // namespace tessera::schedules
