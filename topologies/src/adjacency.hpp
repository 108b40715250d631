#pragma once
// Internal to topologies/: the network as compact adjacency arrays over dense edge indices, the
// rule for which vertices traffic may pass through, and breadth-first hop counts under that rule.
// Routing and metrics share these so that measured diameters are the lengths of actual routes.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tessera/topologies/topology.hpp"

namespace tessera::topo::detail {

// Neighbours of every vertex in compressed rows, each row in dense edge order.
struct Adjacency {
  std::vector<size_t> row_start;    // vertex v's entries are [row_start[v], row_start[v + 1])
  std::vector<VertexId> neighbour;  // the other end of the edge
  std::vector<int32_t> edge;        // its dense edge index

  size_t begin(VertexId v) const { return row_start[v]; }
  size_t end(VertexId v) const { return row_start[v + 1]; }
  size_t vertex_count() const { return row_start.size() - 1; }

  // outgoing: the targets of v's out-edges; otherwise the sources of its in-edges.
  static Adjacency of(const Topology& topology, bool outgoing) {
    const Graph& graph = topology.graph;
    auto owner = [&](const EdgeId& e) { return outgoing ? boost::source(e, graph) : boost::target(e, graph); };
    auto other = [&](const EdgeId& e) { return outgoing ? boost::target(e, graph) : boost::source(e, graph); };
    Adjacency adjacency;
    adjacency.row_start.assign(boost::num_vertices(graph) + 1, 0);
    for (const EdgeId& e : topology.edges) ++adjacency.row_start[owner(e) + 1];
    for (size_t v = 1; v < adjacency.row_start.size(); ++v) adjacency.row_start[v] += adjacency.row_start[v - 1];
    adjacency.neighbour.resize(topology.edges.size());
    adjacency.edge.resize(topology.edges.size());
    std::vector<size_t> next(adjacency.row_start.begin(), adjacency.row_start.end() - 1);
    for (size_t i = 0; i < topology.edges.size(); ++i) {
      const size_t slot = next[owner(topology.edges[i])]++;
      adjacency.neighbour[slot] = other(topology.edges[i]);
      adjacency.edge[slot] = static_cast<int32_t>(i);
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
  std::vector<char> relay(boost::num_vertices(topology.graph), 1);
  if (!gpus_relay) {
    for (VertexId v : topology.gpu_vertices) relay[v] = 0;
  }
  return relay;
}

inline constexpr uint16_t kUnreached = 0xFFFF;

// Hops from `start` to every vertex over `adjacency` (outgoing: paths from start; incoming:
// paths into start), passing only through relays. Into `hops`, resized to the vertex count.
inline void hop_counts(const Adjacency& adjacency, const std::vector<char>& relay, VertexId start,
                       std::vector<uint16_t>& hops) {
  hops.assign(adjacency.vertex_count(), kUnreached);
  hops[start] = 0;
  std::vector<VertexId> frontier{start};
  for (size_t head = 0; head < frontier.size(); ++head) {
    const VertexId u = frontier[head];
    if (u != start && !relay[u]) continue;  // reached, but traffic ends here
    const uint16_t next_hops = static_cast<uint16_t>(hops[u] + 1);
    if (next_hops == kUnreached) throw std::length_error("network diameter exceeds 65534 hops");
    for (size_t i = adjacency.begin(u); i < adjacency.end(u); ++i) {
      const VertexId v = adjacency.neighbour[i];
      if (hops[v] != kUnreached) continue;
      hops[v] = next_hops;
      frontier.push_back(v);
    }
  }
}

}  // namespace tessera::topo::detail
