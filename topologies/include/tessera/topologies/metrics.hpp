#pragma once
// Whole-network figures used in reports and checked against closed forms in tests.
#include <cstdint>

#include "tessera/topologies/routing.hpp"

namespace tessera::topo {

struct TopologyMetrics {
  int32_t gpus = 0;
  int32_t switches = 0;       // every non-GPU vertex
  int32_t links = 0;          // directed links
  int32_t diameter_hops = 0;  // longest route (in hops) between two GPUs, using the Router
  double bisection_bytes_per_s = 0;  // min cut between GPUs [0, n/2) and [n/2, n), one direction
};

TopologyMetrics measure(const Topology& topology);

}  // namespace tessera::topo
