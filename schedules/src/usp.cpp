// Unified sequence parallelism (USP, as in yunchang / LoongTrain's 2D-Attention): Ulysses of
// degree u inside groups of u consecutive GPUs (normally one server: the all-to-all stays on
// NVLink) and a KV ring of degree r = P / u across the groups.
#include "head_split.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"
#include "usp_emitter.hpp"

namespace tessera::schedules {

int32_t usp_ulysses_degree(const Problem& problem, const GeneratorOptions& options) {
  if (options.tile) return options.tile->first;
  for (int32_t u = options.gpus; u > 1; --u)
    if (options.gpus % u == 0 && head_split_problem(problem, u).empty()) return u;
  return 1;
}

Schedule generate_usp(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  TileShape shape = options.tile.value_or(TileShape{usp_ulysses_degree(problem, options), 0});
  if (!options.tile) shape.second = gpus / shape.first;
  if (static_cast<int64_t>(shape.first) * shape.second != gpus)
    throw UserError("--tile: usp degrees " + to_string(shape) + " (Ulysses x ring) multiply to " +
                    std::to_string(int64_t{shape.first} * shape.second) + ", not " + std::to_string(gpus) + " GPUs");
  if (auto reason = head_split_problem(problem, shape.first); !reason.empty())
    throw UserError("usp " + to_string(shape) + " does not apply: " + reason);
  ScheduleBuilder builder("usp", "u=" + std::to_string(shape.first) + " r=" + std::to_string(shape.second) + " " +
                                     to_string(grid.layout()),
                          problem, grid.layout(), gpus, shape.first);
  // Group g (GPUs g u .. g u + u - 1, chunks the same) runs group 0's program shifted by g u:
  // its all-to-alls are group 0's among its own GPUs, its ring sends go one group on. So where
  // the grid is the same under a shift by u, group 0's programs alone are held (rotation.hpp).
  const int32_t period = shape.first;
  // (Held at its own period alone: a larger one asked for emits every GPU's program.)
  const bool by_rotation = options.by_rotation && (options.rotation_period == 0 || options.rotation_period == period) &&
                           period < gpus && grid_is_rotation_invariant(grid, period);
  if (options.by_rotation && !by_rotation) {
    // Estimated as group 0's programs before the grid was known: every GPU's must fit too.
    GeneratorOptions full = options;
    full.by_rotation = false;
    require_schedule_memory("usp", problem, full);
  }
  if (by_rotation) builder.set_form(ProgramForm::rotation, period);
  emit_head_split_ring(builder, grid, shape.first, shape.second, options.buffers, by_rotation);
  Schedule schedule = builder.finish();
  schedule.tile = shape;
  return schedule;
}

}  // namespace tessera::schedules
