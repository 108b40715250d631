#pragma once
// A schedule held by rotation (core/schedule.hpp: the programs of GPUs 0 .. period - 1, GPU g
// running GPU (g mod period)'s shifted by g - g mod period) on a network that looks the same from
// every shifted GPU runs every shifted copy of a transfer at the same moments as the transfer
// itself. So the simulator runs the held programs alone, and lets each held transfer stand for
// its twins: its flow crosses, instead of each resource (link direction or cable) of its route,
// that resource's class, the resources the shift by multiples of the period maps onto each
// other. A class then carries at every moment exactly the flows one of its resources carries in
// the full run, and max-min sharing gives every flow the rate its twins get there.
//
// That holds when the shift is a symmetry of the routes the held transfers take: the routes of a
// transfer's P / period shifted copies have the same length and cross distinct resources of equal
// capacity, bandwidth, latency and kind at each position, and no class gathers more than those
// P / period resources (two different positions or routes mapped onto one class would stand for
// resources that are not twins). A route crossing one class twice is refused too: its twins
// would share a resource that the flow meets once.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

struct RotationResources {
  // Per topology resource, the smallest resource of its class (itself where no held transfer's
  // route reaches it). Empty when `why_not` says why the network breaks the schedule's symmetry.
  std::vector<int32_t> representative;
  std::string why_not;
};

// For a schedule held by rotation, its transfers (sends to their peers, collectives' transfers)
// and their shifted copies routed between the GPUs `placement` gives their ranks. `period`: the
// programs held, a multiple of the schedule's period (0: the schedule's own), for asking whether
// the schedule may be held at a larger period on this network (symmetric_period.hpp).
RotationResources rotation_resources(const Schedule& schedule, const topo::Topology& topology,
                                     std::span<const int32_t> placement, int32_t period = 0);

}  // namespace tessera::sim
