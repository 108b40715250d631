#pragma once
// Routes between GPUs, as sequences of dense edge indices (Topology::edges).
//  - ring: the shorter way round (unidirectional rings: forward only; ties: forward);
//  - torus: dimension-ordered (dimension 0 first), the shorter way in each (ties: positive);
//  - everything else: shortest paths in hops with deterministic ECMP: among equally short next
//    hops the choice is a fixed hash of (source, destination), so routes spread but repeat.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

class Router {
 public:
  explicit Router(const Topology& topology);
  // Edge indices from GPU src to GPU dst (empty when src == dst). Cached; not thread-safe.
  std::span<const int32_t> route(int32_t src_gpu, int32_t dst_gpu);
  int32_t hops(int32_t src_gpu, int32_t dst_gpu) { return static_cast<int32_t>(route(src_gpu, dst_gpu).size()); }
  const Topology& topology() const { return topology_; }

 private:
  const Topology& topology_;
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tessera::topo
