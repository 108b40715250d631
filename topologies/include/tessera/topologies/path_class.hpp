#pragma once
// Which per-message latency a routed path pays (network_model.hpp): a path whose every hop is
// NVLink stays inside a server; anything else (a NIC, a leaf or spine, a generic or torus
// link) is a network path. No hops at all: both ranks share a device.
#include <span>

#include "tessera/core/network_model.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

inline PathClass path_class(const Topology& topology, std::span<const int32_t> route) {
  if (route.empty()) return PathClass::local;
  for (int32_t edge : route)
    if (topology.link(edge).link_class != LinkClass::nvlink)
      return PathClass::network;
  return PathClass::nvlink;
}

}  // namespace tessera::topo
