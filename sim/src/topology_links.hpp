#pragma once
// Two facts about a topology's links that sim/ reports, shared by the simulator, its time
// bound and its outputs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/topologies/topology.hpp"

namespace tessera::sim::links {

// The bandwidth of all links into GPU `gpu`, added up in link order.
double ingress_bytes_per_s(const topo::Topology& topology, int32_t gpu);
// "gpu3->node0.nvswitch": the first link using `resource` names it.
std::string resource_name(const topo::Topology& topology, size_t resource);

}  // namespace tessera::sim::links
