#pragma once
// Placement: which GPU of the topology each schedule rank runs on.
#include <string>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

// "linear" (rank r -> GPU r), "round-robin" (consecutive ranks on different servers),
// "rail-aligned" (servers in order, every other one walked backwards, so ring hops between
// servers join GPUs of the same index: one rail on rail-optimised fabrics),
// "list:3,0,1,2" (explicit), "auto" (topology-aware: for mesh schedules, the Q-rings or the
// KV-rings inside servers, whichever moves fewer bytes between servers; rail-aligned otherwise).
std::vector<int32_t> place_ranks(const Topology& topology, const Schedule& schedule, const std::string& placement);

}  // namespace tessera::topo
