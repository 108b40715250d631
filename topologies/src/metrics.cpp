// Whole-network figures: counts, the diameter in route hops, and the bisection bandwidth as a
// maximum flow from the first half of the GPUs to the second.
#include "tessera/topologies/metrics.hpp"

#include <algorithm>
#include <cmath>

#include <boost/graph/push_relabel_max_flow.hpp>

#include "adjacency.hpp"
#include "tessera/topologies/builders.hpp"

namespace tessera::topo {

namespace {

// Rings, tori, a single switch and full connection look the same from every GPU, so the
// longest route from GPU 0 is the longest of all. Every other network: hop counts from each
// GPU under the same relay rule the Router uses, whose routes are shortest paths.
int32_t diameter_hops(const Topology& topology) {
  const int32_t gpus = topology.gpu_count();
  int32_t longest = 0;
  switch (topology.shape) {
    case TopologyShape::ring:
    case TopologyShape::torus:
    case TopologyShape::single_switch:
    case TopologyShape::fully_connected: {
      Router router(topology);
      for (int32_t gpu = 1; gpu < gpus; ++gpu) longest = std::max(longest, router.hops(0, gpu));
      return longest;
    }
    case TopologyShape::hierarchical:
    case TopologyShape::custom: break;
  }
  const detail::Adjacency outgoing = detail::Adjacency::of(topology, true);
  const std::vector<char> relay = detail::relay_vertices(topology);
  std::vector<uint16_t> hops;
  for (VertexId source : topology.gpu_vertices) {
    detail::hop_counts(outgoing, relay, source, hops);
    for (VertexId target : topology.gpu_vertices) longest = std::max<int32_t>(longest, hops[target]);
  }
  return longest;
}

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, int64_t,
                    boost::property<boost::edge_residual_capacity_t, int64_t,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

void add_arc(FlowGraph& flow, size_t from, size_t to, int64_t capacity) {
  auto arc = boost::add_edge(from, to, flow).first;
  auto back = boost::add_edge(to, from, flow).first;
  boost::put(boost::edge_capacity, flow, arc, capacity);
  boost::put(boost::edge_capacity, flow, back, int64_t{0});
  boost::put(boost::edge_reverse, flow, arc, back);
  boost::put(boost::edge_reverse, flow, back, arc);
}

// Capacities in whole bytes per second keep the flow arithmetic exact. Each link may carry
// its own bandwidth, or its resource's when that is smaller; a half-duplex cable's two edges
// point opposite ways, and a one-way flow never needs both, so sharing does not lower the cut.
double bisection_bytes_per_s(const Topology& topology) {
  const int32_t gpus = topology.gpu_count();
  if (gpus < 2) return 0;
  const size_t vertices = boost::num_vertices(topology.graph);
  const size_t source = vertices, sink = vertices + 1;
  FlowGraph flow(vertices + 2);
  int64_t total = 0;
  for (const EdgeId& e : topology.edges) {
    const LinkInfo& link = topology.graph[e];
    double bytes_per_s = link.bytes_per_s;
    if (link.resource >= 0 && static_cast<size_t>(link.resource) < topology.resource_bytes_per_s.size()) {
      bytes_per_s = std::min(bytes_per_s, topology.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
    }
    const int64_t capacity = std::llround(bytes_per_s);
    add_arc(flow, boost::source(e, topology.graph), boost::target(e, topology.graph), capacity);
    total += capacity;
  }
  const int64_t unlimited = total + 1;  // more than any cut through the links
  for (int32_t gpu = 0; gpu < gpus; ++gpu) {
    const size_t vertex = topology.gpu_vertices[static_cast<size_t>(gpu)];
    if (gpu < gpus / 2) {
      add_arc(flow, source, vertex, unlimited);
    } else {
      add_arc(flow, vertex, sink, unlimited);
    }
  }
  return static_cast<double>(boost::push_relabel_max_flow(flow, source, sink));
}

}  // namespace

TopologyMetrics measure(const Topology& topology) {
  check_connected(topology);
  TopologyMetrics metrics;
  metrics.gpus = topology.gpu_count();
  metrics.switches = static_cast<int32_t>(boost::num_vertices(topology.graph)) - metrics.gpus;
  metrics.links = static_cast<int32_t>(topology.edges.size());
  metrics.diameter_hops = diameter_hops(topology);
  metrics.bisection_bytes_per_s = bisection_bytes_per_s(topology);
  return metrics;
}

}  // namespace tessera::topo
