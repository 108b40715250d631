#pragma once
// Held by rotation on a network that is not uniform: a ring on servers of 8 GPUs under leaves of
// 32 servers looks the same from GPU 0 and from GPU 256, not from GPU 1. Its programs can still
// be held, a leaf group's (256) in place of one GPU's, and the simulator, the routed cost and the
// link loads read that form as they read the uniform network's.
#include <cstdint>
#include <span>

#include "tessera/core/schedule.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

// The smallest period, a multiple of the held schedule's own and a divisor of its GPU count,
// under which the network looks the same from every shifted GPU to the schedule's transfers
// placed by `placement` (sim/src/rotation_resources.hpp gives the conditions); 0 where none
// smaller than the GPU count does, or the schedule is not held by rotation.
int32_t symmetric_period(const Schedule& held, const topo::Topology& topology, std::span<const int32_t> placement);

}  // namespace tessera::sim
