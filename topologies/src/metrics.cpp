// Whole-network figures: counts, the diameter in route hops, and the bisection bandwidth as a
// maximum flow from the first half of the GPUs to the second.
#include "tessera/topologies/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "adjacency.hpp"
#include "tessera/topologies/builders.hpp"

namespace tessera::topo {

namespace {

// Rings, tori, a single switch and full connection look the same from every GPU, and their
// routes (routing.hpp) have closed-form lengths: the shorter way round a ring (all the way on
// a unidirectional one), that in each dimension of a torus, two hops through the switch, one
// link. Routing from GPU 0 to every GPU instead would store O(P^2) link indices on a ring.
int32_t symmetric_diameter_hops(const Topology& topology) {
  const int32_t gpus = topology.gpu_count();
  if (gpus < 2) return 0;
  switch (topology.shape) {
    case TopologyShape::ring: return topology.bidirectional_ring ? gpus / 2 : gpus - 1;
    case TopologyShape::torus: {
      int32_t hops = 0;
      for (int32_t k : topology.torus_dims) hops += k / 2;
      return hops;
    }
    case TopologyShape::single_switch: return 2;
    default: return 1;
  }
}

// Every other network: hop counts from each GPU under the same relay rule the Router uses, whose routes are shortest paths (or, under
// PXN, two of them joined at a proxy GPU).
int32_t diameter_hops(const Topology& topology) {
  const int32_t gpus = topology.gpu_count();
  int32_t longest = 0;
  switch (topology.shape) {
    case TopologyShape::ring:
    case TopologyShape::torus:
    case TopologyShape::single_switch:
    case TopologyShape::fully_connected: return symmetric_diameter_hops(topology);
    case TopologyShape::hierarchical:
    case TopologyShape::custom: break;
  }
  const detail::Adjacency outgoing = detail::Adjacency::of(topology, true);
  const std::vector<char> relay = detail::relay_vertices(topology);
  // A PXN route is two shortest paths joined at its proxy GPU p. The destinations p relays
  // for are the same whoever sends (other servers' GPUs of p's local index), so the longest
  // such route is the longest first leg into p plus the longest second leg out of p.
  Router router(topology);
  std::vector<int32_t> into_proxy(static_cast<size_t>(gpus), -1), out_of_proxy(static_cast<size_t>(gpus), 0);
  std::vector<uint16_t> hops;
  for (int32_t source = 0; source < gpus; ++source) {
    detail::hop_counts(outgoing, relay, topology.gpu_vertex(source), hops);
    for (int32_t target = 0; target < gpus; ++target) {
      const int32_t target_hops = hops[static_cast<size_t>(topology.gpu_vertex(target))];
      const int32_t proxy = router.pxn_proxy(source, target);
      if (proxy < 0) {
        longest = std::max(longest, target_hops);
        // `source` relays for `target` when a server-mate on another NIC sends to it.
        if (topology.routing == RoutingPolicy::pxn && topology.node_of(source) != topology.node_of(target) &&
            target % topology.gpus_per_node == source % topology.gpus_per_node)
          out_of_proxy[static_cast<size_t>(source)] = std::max(out_of_proxy[static_cast<size_t>(source)], target_hops);
      } else {
        int32_t& first_leg = into_proxy[static_cast<size_t>(proxy)];
        first_leg = std::max<int32_t>(first_leg, hops[static_cast<size_t>(topology.gpu_vertex(proxy))]);
      }
    }
  }
  for (int32_t proxy = 0; proxy < gpus; ++proxy)
    if (into_proxy[static_cast<size_t>(proxy)] >= 0)
      longest = std::max(longest, into_proxy[static_cast<size_t>(proxy)] + out_of_proxy[static_cast<size_t>(proxy)]);
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

// Capacities in whole units of `unit_bytes_per_s` keep the flow arithmetic exact: one byte per
// second while the links' bandwidths sum to under 2^60, coarser past that (1e18 B/s links by the
// million), so that no sum the max-flow forms can overflow 64 bits. Each link may carry its own
// bandwidth, or its resource's when that is smaller; a half-duplex cable's two links point
// opposite ways, and a one-way flow never needs both, so sharing does not lower the cut.
double bisection_bytes_per_s(const Topology& topology) {
  const int32_t gpus = topology.gpu_count();
  if (gpus < 2) return 0;
  const size_t vertices = static_cast<size_t>(topology.vertex_count());
  const size_t source = vertices, sink = vertices + 1;
  std::vector<double> link_bytes_per_s(static_cast<size_t>(topology.link_count()));
  double total_bytes_per_s = 0;
  for (int32_t l = 0; l < topology.link_count(); ++l) {
    const LinkInfo& link = topology.link(l);
    double bytes_per_s = link.bytes_per_s;
    if (link.resource >= 0 && static_cast<size_t>(link.resource) < topology.resource_bytes_per_s.size()) {
      bytes_per_s = std::min(bytes_per_s, topology.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
    }
    link_bytes_per_s[static_cast<size_t>(l)] = bytes_per_s;
    total_bytes_per_s += bytes_per_s;
  }
  constexpr double kMostUnits = 1152921504606846976.0;  // 2^60
  const double unit_bytes_per_s = std::max(1.0, std::ceil(total_bytes_per_s / kMostUnits));
  FlowGraph flow(vertices + 2);
  // A GPU's own arc from the source (or to the sink) needs only more than all its links carry,
  // so that the preflow's excess, summed over GPUs, stays within the links' total.
  std::vector<int64_t> gpu_link_units(vertices, 0);
  for (int32_t l = 0; l < topology.link_count(); ++l) {
    const int64_t capacity = std::llround(link_bytes_per_s[static_cast<size_t>(l)] / unit_bytes_per_s);
    const auto from = static_cast<size_t>(topology.link_source(l)), to = static_cast<size_t>(topology.link_target(l));
    add_arc(flow, from, to, capacity);
    gpu_link_units[from] += capacity;
    gpu_link_units[to] += capacity;
  }
  for (int32_t gpu = 0; gpu < gpus; ++gpu) {
    const size_t vertex = static_cast<size_t>(topology.gpu_vertex(gpu));
    const int64_t unlimited = gpu_link_units[vertex] + 1;  // more than any cut next to this GPU
    if (gpu < gpus / 2) {
      add_arc(flow, source, vertex, unlimited);
    } else {
      add_arc(flow, vertex, sink, unlimited);
    }
  }
  return static_cast<double>(boost::push_relabel_max_flow(flow, source, sink)) * unit_bytes_per_s;
}

}  // namespace

TopologyMetrics measure(const Topology& topology) {
  check_connected(topology);
  TopologyMetrics metrics;
  metrics.gpus = topology.gpu_count();
  metrics.switches = topology.vertex_count() - metrics.gpus;
  metrics.links = topology.link_count();
  metrics.diameter_hops = diameter_hops(topology);
  metrics.bisection_bytes_per_s = bisection_bytes_per_s(topology);
  return metrics;
}

}  // namespace tessera::topo
