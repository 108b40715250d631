#include "tessera/sim/time_bound.hpp"

#include <algorithm>

#include "tessera/sim/simulator.hpp"

namespace tessera::sim {

TimeLowerBound simulated_time_bound(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                    const GpuProfile& gpu) {
  double fastest_bytes_per_s = 0;
  for (auto vertex : topology.gpu_vertices) {
    double into_bytes_per_s = 0;
    for (auto [edge, end] = boost::in_edges(vertex, topology.graph); edge != end; ++edge)
      into_bytes_per_s += topology.graph[*edge].bytes_per_s;
    fastest_bytes_per_s = std::max(fastest_bytes_per_s, into_bytes_per_s);
  }
  return time_lower_bound(
      schedule, grid, [&](const Schedule& ideal, const Op& op) { return op_compute_s(ideal, grid, op, gpu); },
      fastest_bytes_per_s);
}

}  // namespace tessera::sim
