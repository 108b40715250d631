// DeepSpeed-Ulysses: an all-to-all turns each GPU's sequence chunk of all heads into the whole
// sequence of 1/P of the heads; each GPU then runs ordinary attention for its heads and a
// final all-to-all returns the outputs (backward: dQ, dK, dV) to the sequence owners.
// It needs P to divide the query heads (and the KV heads to split or replicate evenly).
#include "head_split.hpp"
#include "tessera/core/error.hpp"
#include "usp_emitter.hpp"

namespace tessera::schedules {

Schedule generate_ulysses(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  if (auto reason = head_split_problem(problem, gpus); !reason.empty())
    throw UserError("ulysses does not apply on " + std::to_string(gpus) + " GPUs: " + reason +
                    " (try usp, which splits heads only inside groups)");
  ScheduleBuilder builder("ulysses", "u=" + std::to_string(gpus) + " " + to_string(grid.layout()), problem,
                          grid.layout(), gpus, gpus);
  emit_head_split_ring(builder, grid, gpus, 1, options.buffers);
  return builder.finish();
}

}  // namespace tessera::schedules
