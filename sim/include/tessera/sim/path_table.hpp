#pragma once
// What the engine needs of the route between two GPUs, worked out once per pair: the
// resources (link directions, or shared cables) its flow crosses, the latency of its links
// added up, its narrowest resource (the alpha-beta rate) and its class (NVLink, network or
// local), which decides the per-message latency it pays (network_model.hpp).
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "tessera/core/network_model.hpp"
#include "tessera/topologies/routing.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

struct RoutedPath {
  std::span<const int32_t> resources;  // in route order; empty within one GPU
  double link_latency_s = 0;
  double narrowest_bytes_per_s = 0;    // infinity when the route has no links
  PathClass path_class = PathClass::local;
};

class PathTable {
 public:
  // `representative` (empty: none) names, per resource, the resource a route crosses in its
  // place: a schedule held by rotation crosses each link's class (sim/src/rotation_resources.hpp).
  explicit PathTable(const topo::Topology& topology, std::vector<int32_t> representative = {});
  // The path from GPU src_gpu to GPU dst_gpu; its `resources` stay valid until the next call.
  RoutedPath between(int32_t src_gpu, int32_t dst_gpu);

 private:
  struct Entry {
    uint32_t first_resource = 0;
    uint32_t resource_count = 0;
    double link_latency_s = 0;
    double narrowest_bytes_per_s = 0;
    PathClass path_class = PathClass::local;
  };
  uint32_t add(uint64_t pair, int32_t src_gpu, int32_t dst_gpu);  // index of the new entry

  const topo::Topology& topology_;
  topo::Router router_;
  std::vector<int32_t> representative_;
  std::unordered_map<uint64_t, uint32_t> entry_of_pair_;
  // Per source GPU, the last destination asked for and its entry (-1: none): a ring's ranks
  // each send to one neighbour, so most look-ups end here, without hashing.
  std::vector<std::pair<int32_t, uint32_t>> last_of_source_;
  std::vector<Entry> entries_;
  std::vector<int32_t> resources_;  // every entry's resources, back to back
};

}  // namespace tessera::sim
