#pragma once
// The Mesh planner's hardware (generators.hpp PlanHardware) on the uniform network of a
// Hardware: both rings run over the one link, and a hop pays the link's latency plus one
// message's costs on a network path. Topologies: scenario/plan_hardware.hpp.
#include "tessera/costmodel/cost.hpp"
#include "tessera/costmodel/generators.hpp"

namespace tessera {

inline PlanHardware uniform_plan_hardware(const Hardware& hardware) {
  const double hop_latency_s = hardware.link_latency_s + hardware.message.message_s(PathClass::network);
  return PlanHardware{hardware.effective_flops_per_s(), hardware.link_bytes_per_s, hardware.link_bytes_per_s,
                      hop_latency_s, hop_latency_s};
}

}  // namespace tessera
