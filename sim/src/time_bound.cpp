#include "tessera/sim/time_bound.hpp"

#include <algorithm>

#include "tessera/sim/simulator.hpp"
#include "topology_links.hpp"

namespace tessera::sim {

costmodel::TimeLowerBound simulated_time_bound(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                    const GpuProfile& gpu) {
  double fastest_bytes_per_s = 0;
  for (int32_t index = 0; index < topology.gpu_count(); ++index)
    fastest_bytes_per_s = std::max(fastest_bytes_per_s, links::ingress_bytes_per_s(topology, index));
  return costmodel::time_lower_bound(
      schedule, grid, [&](const Schedule& ideal, const Op& op) { return op_compute_s(ideal, grid, op, gpu); },
      fastest_bytes_per_s);
}

}  // namespace tessera::sim
