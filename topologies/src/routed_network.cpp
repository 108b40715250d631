#include "tessera/topologies/routed_network.hpp"

#include <algorithm>
#include <limits>

#include "tessera/topologies/path_class.hpp"

namespace tessera::topo {

RoutedNetwork::RoutedNetwork(const Topology& topology, std::vector<int32_t> placement)
    : router_(topology), placement_(std::move(placement)) {}

double RoutedNetwork::transfer_s(int32_t src_rank, int32_t dst_rank, int64_t bytes) const {
  const int32_t src = placement_[static_cast<size_t>(src_rank)], dst = placement_[static_cast<size_t>(dst_rank)];
  if (src == dst) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  const Topology& topology = router_.topology();
  double latency_s = 0, narrowest_bytes_per_s = std::numeric_limits<double>::infinity();
  for (int32_t edge : router_.route(src, dst)) {
    const LinkInfo& link = topology.link(edge);
    latency_s += link.latency_s;
    narrowest_bytes_per_s = std::min(narrowest_bytes_per_s, link.bytes_per_s);
  }
  return latency_s + static_cast<double>(bytes) / narrowest_bytes_per_s;
}

PathClass RoutedNetwork::path_class(int32_t src_rank, int32_t dst_rank) const {
  const int32_t src = placement_[static_cast<size_t>(src_rank)], dst = placement_[static_cast<size_t>(dst_rank)];
  if (src == dst) return PathClass::local;
  std::lock_guard<std::mutex> lock(mutex_);
  return topo::path_class(router_.topology(), router_.route(src, dst));
}

}  // namespace tessera::topo
