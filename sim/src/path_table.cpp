#include "tessera/sim/path_table.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "tessera/topologies/path_class.hpp"

namespace tessera::sim {

PathTable::PathTable(const topo::Topology& topology, std::vector<int32_t> representative)
    : topology_(topology),
      router_(topology),
      representative_(std::move(representative)),
      last_of_source_(static_cast<size_t>(topology.gpu_count()), {-1, 0}) {}

RoutedPath PathTable::between(int32_t src_gpu, int32_t dst_gpu) {
  auto find = [&] {
    const uint64_t pair = (static_cast<uint64_t>(static_cast<uint32_t>(src_gpu)) << 32) | static_cast<uint32_t>(dst_gpu);
    const auto found = entry_of_pair_.find(pair);
    return found != entry_of_pair_.end() ? found->second : add(pair, src_gpu, dst_gpu);
  };
  uint32_t index;
  if (src_gpu >= 0 && static_cast<size_t>(src_gpu) < last_of_source_.size()) {
    auto& last = last_of_source_[static_cast<size_t>(src_gpu)];
    if (last.first != dst_gpu) last = {dst_gpu, find()};
    index = last.second;
  } else {
    index = find();  // not a GPU of the topology: the router says so
  }
  const Entry& entry = entries_[index];
  return RoutedPath{{resources_.data() + entry.first_resource, entry.resource_count}, entry.link_latency_s,
                    entry.narrowest_bytes_per_s, entry.path_class};
}

uint32_t PathTable::add(uint64_t pair, int32_t src_gpu, int32_t dst_gpu) {
  const auto route = router_.route(src_gpu, dst_gpu);
  Entry entry;
  entry.first_resource = static_cast<uint32_t>(resources_.size());
  entry.resource_count = static_cast<uint32_t>(route.size());
  // Latencies are added in route order from zero, as a message crosses them.
  double latency_s = 0, narrowest = std::numeric_limits<double>::infinity();
  for (int32_t edge : route) {
    const topo::LinkInfo& link = topology_.link(edge);
    resources_.push_back(representative_.empty() ? link.resource : representative_[static_cast<size_t>(link.resource)]);
    latency_s += link.latency_s;
    narrowest = std::min(narrowest, topology_.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
  }
  entry.link_latency_s = latency_s;
  entry.narrowest_bytes_per_s = narrowest;
  entry.path_class = topo::path_class(topology_, route);
  entries_.push_back(entry);
  const auto index = static_cast<uint32_t>(entries_.size() - 1);
  entry_of_pair_.emplace(pair, index);
  return index;
}

}  // namespace tessera::sim
