#pragma once
// Routes between GPUs, as sequences of link indices (Topology::link).
//  - ring: the shorter way round (unidirectional rings: forward only; ties: forward);
//  - torus: dimension-ordered (dimension 0 first), the shorter way in each (ties: positive);
//  - everything else: shortest paths in hops with deterministic ECMP: among equally short next
//    hops the choice is a fixed hash of (source, destination), so routes spread but repeat;
//  - rail-optimised clusters under RoutingPolicy::pxn (their default), as NCCL's PXN: a transfer
//    between servers first crosses the NVSwitch to the source server's GPU with the
//    destination's local index (its NIC is on the destination's rail), then leaves through that
//    NIC, so it stays on one rail (one leaf, or leaf-spine-leaf between leaf groups) instead of
//    meeting other rails' traffic on the spines. A source already on that NIC goes straight.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

// "pxn" or "ecmp" (UserError otherwise, naming both); "" is the topology's own default.
// Applies it to `topology`; pxn needs a rail-optimised hierarchical cluster (UserError).
void set_routing(Topology& topology, const std::string& routing);

class Router {
 public:
  explicit Router(const Topology& topology);
  // Link indices from GPU src to GPU dst (empty when src == dst). Cached; not thread-safe.
  std::span<const int32_t> route(int32_t src_gpu, int32_t dst_gpu);
  int32_t hops(int32_t src_gpu, int32_t dst_gpu) { return static_cast<int32_t>(route(src_gpu, dst_gpu).size()); }
  // The GPU whose NIC a PXN route leaves through, when it is not the source's own; else -1.
  int32_t pxn_proxy(int32_t src_gpu, int32_t dst_gpu) const;
  const Topology& topology() const { return topology_; }

 private:
  const Topology& topology_;
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tessera::topo
