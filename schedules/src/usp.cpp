// Unified sequence parallelism (USP, as in yunchang / LoongTrain's 2D-Attention): Ulysses of
// degree u inside groups of u consecutive GPUs (normally one server: the all-to-all stays on
// NVLink) and a KV ring of degree r = P / u across the groups.
#include "head_split.hpp"
#include "tessera/core/error.hpp"
#include "usp_emitter.hpp"

namespace tessera::schedules {

namespace {
// The largest Ulysses degree that divides P and splits the heads evenly.
int32_t default_ulysses_degree(const Problem& problem, int32_t gpus) {
  for (int32_t u = gpus; u > 1; --u)
    if (gpus % u == 0 && head_split_problem(problem, u).empty()) return u;
  return 1;
}
}  // namespace

Schedule generate_usp(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  TileShape shape = options.tile.value_or(TileShape{default_ulysses_degree(problem, gpus), 0});
  if (!options.tile) shape.second = gpus / shape.first;
  if (static_cast<int64_t>(shape.first) * shape.second != gpus)
    throw UserError("--tile: usp degrees " + to_string(shape) + " (Ulysses x ring) multiply to " +
                    std::to_string(int64_t{shape.first} * shape.second) + ", not " + std::to_string(gpus) + " GPUs");
  if (auto reason = head_split_problem(problem, shape.first); !reason.empty())
    throw UserError("usp " + to_string(shape) + " does not apply: " + reason);
  ScheduleBuilder builder("usp", "u=" + std::to_string(shape.first) + " r=" + std::to_string(shape.second) + " " +
                                     to_string(grid.layout()),
                          problem, grid.layout(), gpus, shape.first);
  emit_head_split_ring(builder, grid, shape.first, shape.second, options.buffers);
  Schedule schedule = builder.finish();
  schedule.tile = shape;
  return schedule;
}

}  // namespace tessera::schedules
