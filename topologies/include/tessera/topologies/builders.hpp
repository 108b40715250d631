#pragma once
// Builders for the networks the field uses. Each checks its arguments (UserError naming the
// parameter) and connectivity, and fills every field of Topology.
#include <vector>

#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

// GPU i links to i+1 (and back when bidirectional).
Topology build_ring(int32_t gpus, double bytes_per_s, double latency_s, bool bidirectional);
// k-D torus with wrap-around; dims[0] is the fastest-varying coordinate of the GPU index.
Topology build_torus(const std::vector<int32_t>& dims, double bytes_per_s, double latency_s);
// A dedicated link per ordered GPU pair.
Topology build_fully_connected(int32_t gpus, double bytes_per_s, double latency_s);
// One non-blocking switch, one link per GPU.
Topology build_switch(int32_t gpus, double bytes_per_s, double latency_s);

// GPUs in servers on an NVSwitch; servers leave through NICs into a two-level leaf-spine
// fat tree. Rail-optimised: NIC r of every server goes to leaf r (per group of servers).
struct HierarchicalSpec {
  int32_t nodes = 1;
  int32_t gpus_per_node = 8;
  double nvlink_bytes_per_s = 450e9;     // per GPU per direction into the NVSwitch
  double nvlink_latency_s = 1e-6;
  int32_t nics_per_node = 8;
  double nic_bytes_per_s = 50e9;         // 400 Gb/s
  double nic_latency_s = 2e-6;
  bool rail_optimized = true;
  int32_t leaf_down_ports = 32;          // NIC ports per leaf switch
  double oversubscription = 1.0;         // leaf down-bandwidth / up-bandwidth (1 = non-blocking)
  double switch_latency_s = 0.5e-6;      // per leaf/spine hop
};
Topology build_hierarchical(const HierarchicalSpec& spec);

// The per-dimension shorthand (research/simulators.md 2.1): dimension 0 fastest.
enum class DimensionKind : uint8_t { ring, switch_, fully_connected };
struct DimensionSpec {
  DimensionKind kind = DimensionKind::ring;
  int32_t size = 2;
  double bytes_per_s = 0;
  double latency_s = 0;
};
Topology build_from_dimensions(const std::vector<DimensionSpec>& dimensions);

// Bytes a network of this size takes with routing and metrics over it: what every builder
// checks against the memory limit (core/resource_limits.hpp) before adding a vertex.
double estimate_topology_bytes(double vertices, double links);

// Throws UserError naming a GPU that cannot reach another one.
void check_connected(const Topology& topology);

}  // namespace tessera::topo
