#pragma once
// Internal to topologies/: the network as compact adjacency arrays over dense link indices, the
// rule for which vertices traffic may pass through, and breadth-first hop counts under that rule.
// Routing and metrics share these so that measured diameters are the lengths of actual routes.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tessera/topologies/topology.hpp"

namespace tessera::topo::detail {

// Neighbours of every vertex in compressed rows, each row in link order: one contiguous array
// for the whole network, which the hop counts and route walks scan many times.
struct Adjacency {
  std::vector<size_t> row_start;   // vertex v's entries are [row_start[v], row_start[v + 1])
  std::vector<int32_t> neighbour;  // the other end of the link
  std::vector<int32_t> edge;       // its link index

  size_t begin(int32_t v) const { return row_start[static_cast<size_t>(v)]; }
  size_t end(int32_t v) const { return row_start[static_cast<size_t>(v) + 1]; }
  size_t vertex_count() const { return row_start.size() - 1; }

  // outgoing: the targets of v's out-links; otherwise the sources of its in-links.
  static Adjacency of(const Topology& topology, bool outgoing) {
    Adjacency adjacency;
    adjacency.row_start.assign(static_cast<size_t>(topology.vertex_count()) + 1, 0);
    adjacency.neighbour.reserve(static_cast<size_t>(topology.link_count()));
    adjacency.edge.reserve(static_cast<size_t>(topology.link_count()));
    for (int32_t v = 0; v < topology.vertex_count(); ++v) {
      for (int32_t link : outgoing ? topology.out_links(v) : topology.in_links(v)) {
        adjacency.neighbour.push_back(outgoing ? topology.link_target(link) : topology.link_source(link));
        adjacency.edge.push_back(link);
      }
      adjacency.row_start[static_cast<size_t>(v) + 1] = adjacency.neighbour.size();
    }
    return adjacency;
  }
};

// 1 where traffic between two other GPUs may pass. Switches always relay. GPUs relay on rings,
// tori, product networks and explicit graphs, where they are the routers; in a hierarchical
// cluster they do not: a shortest path leaves through the source GPU's own NIC. (PXN's hop over
// NVLink to another GPU's NIC is two such paths joined at that GPU: routing.cpp, walk_pxn.)
inline std::vector<char> relay_vertices(const Topology& topology) {
  const bool gpus_relay = topology.shape != TopologyShape::hierarchical;
  std::vector<char> relay(static_cast<size_t>(topology.vertex_count()), 1);
  if (!gpus_relay) {
    for (int32_t gpu = 0; gpu < topology.gpu_count(); ++gpu) relay[static_cast<size_t>(topology.gpu_vertex(gpu))] = 0;
  }
  return relay;
}

inline constexpr uint16_t kUnreached = 0xFFFF;

// Hops from `start` to every vertex over `adjacency` (outgoing: paths from start; incoming:
// paths into start), passing only through relays. Into `hops`, resized to the vertex count.
inline void hop_counts(const Adjacency& adjacency, const std::vector<char>& relay, int32_t start,
                       std::vector<uint16_t>& hops) {
  hops.assign(adjacency.vertex_count(), kUnreached);
  hops[static_cast<size_t>(start)] = 0;
  std::vector<int32_t> frontier{start};
  for (size_t head = 0; head < frontier.size(); ++head) {
    const int32_t u = frontier[head];
    if (u != start && !relay[static_cast<size_t>(u)]) continue;  // reached, but traffic ends here
    const uint16_t next_hops = static_cast<uint16_t>(hops[static_cast<size_t>(u)] + 1);
    if (next_hops == kUnreached) throw std::length_error("network diameter exceeds 65534 hops");
    for (size_t i = adjacency.begin(u); i < adjacency.end(u); ++i) {
      const int32_t v = adjacency.neighbour[i];
      if (hops[static_cast<size_t>(v)] != kUnreached) continue;
      hops[static_cast<size_t>(v)] = next_hops;
      frontier.push_back(v);
    }
  }
}

}  // namespace tessera::topo::detail
