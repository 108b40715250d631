// Ring-Attention: every GPU keeps one side of the attention and the other travels around the
// ring of all P GPUs, one hop per step (ring_emitter.hpp): pass-KV (the default; queries stay)
// or pass-Q (keys and values stay). The layout only changes which tokens a chunk holds, so
// contiguous, zigzag and striped rings share this one generator. Which side should travel
// follows from H/G: pass-KV moves 2·G·d per token and pass-Q about (2·H·d + H) (Q out, O back).
#include "ring_emitter.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

Schedule generate_ring(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  const RingSide side = parse_ring_side(options.variant);
  std::string variant = to_string(grid.layout());
  if (side == RingSide::pass_q) variant = "pass-q " + variant;
  ScheduleBuilder builder("ring", variant, problem, grid.layout(), gpus);
  const RingStreams streams = make_ring_streams(builder, side, options.buffers);
  std::vector<int32_t> members;
  std::vector<std::vector<int32_t>> chunks;
  for (int32_t gpu = 0; gpu < gpus; ++gpu) {
    members.push_back(gpu);
    chunks.push_back({gpu});
  }
  const RingPass ring = make_ring_pass(grid, side, 0, std::move(members), std::move(chunks));
  // Every member's program is member 0's shifted wherever the grid is the same along every
  // diagonal (rotation.hpp): then, when asked, member 0's alone is emitted.
  const int32_t period = held_period(1, options.rotation_period, gpus);
  const bool by_rotation = options.by_rotation && grid_is_rotation_invariant(grid);
  if (options.by_rotation && !by_rotation) {
    // Estimated as GPU 0's program before the grid was known: every GPU's must fit too.
    GeneratorOptions full = options;
    full.by_rotation = false;
    require_schedule_memory("ring", problem, full);
  }
  const int32_t emitted = by_rotation ? period : gpus;
  if (by_rotation) builder.set_form(ProgramForm::rotation, period);
  // At most, per member emitted, pass and step: a partial's recv and merge, the chunk's send and
  // recv, one compute op of one block, the partial's send (each of at most 3 items); and the
  // last partial home (emit_ring_pass). 6 M ops at 1,024 GPUs: grown by doubling, their arrays
  // were faulted in twice over.
  const size_t passes = (problem.has_forward() ? 1 : 0) + (problem.has_backward() ? 1 : 0);
  const size_t most_ops = passes * static_cast<size_t>(emitted) * (6 * static_cast<size_t>(gpus) + 2);
  builder.reserve(most_ops, passes * static_cast<size_t>(emitted) * static_cast<size_t>(gpus), 3 * most_ops);
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    builder.set_pass(pass);
    for (int32_t gpu = 0; gpu < emitted; ++gpu) emit_ring_pass(builder, grid, streams, ring, pass, gpu);
  }
  return builder.finish();
}

}  // namespace tessera::schedules
