#pragma once
// The cost model's view of a topology: a transfer from rank s to rank d follows the route
// between their GPUs and takes the sum of the hop latencies plus bytes over the narrowest
// link's bandwidth (cut-through, no contention: contention is the simulator's job).
#include <mutex>
#include <vector>

#include "tessera/core/network_model.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::topo {

class RoutedNetwork final : public NetworkModel {
 public:
  RoutedNetwork(const Topology& topology, std::vector<int32_t> placement);
  double transfer_s(int32_t src_rank, int32_t dst_rank, int64_t bytes) const override;
  PathClass path_class(int32_t src_rank, int32_t dst_rank) const override;  // topologies/path_class.hpp
  const std::vector<int32_t>& placement() const { return placement_; }

 private:
  mutable Router router_;  // caches routes; guarded by mutex_
  mutable std::mutex mutex_;
  std::vector<int32_t> placement_;
};

}  // namespace tessera::topo
