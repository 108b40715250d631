// Ring-Attention: every GPU keeps one side of the attention and the other travels around the
// ring of all P GPUs, one hop per step (ring_emitter.hpp): pass-KV (the default; queries stay)
// or pass-Q (keys and values stay). The layout only changes which tokens a chunk holds, so
// contiguous, zigzag and striped rings share this one generator. Which side should travel
// follows from H/G: pass-KV moves 2·G·d per token and pass-Q about (2·H·d + H) (Q out, O back).
#include "ring_emitter.hpp"
#include "tessera/schedules/generators.hpp"

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
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    builder.set_pass(pass);
    for (int32_t gpu = 0; gpu < gpus; ++gpu) emit_ring_pass(builder, grid, streams, ring, pass, gpu);
  }
  return builder.finish();
}

}  // namespace tessera::schedules
