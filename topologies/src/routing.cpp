// Routes between GPUs: rings the shorter way, tori dimension by dimension, everything else on
// shortest hop paths with a deterministic ECMP choice, and PXN between the servers of a
// rail-optimised cluster. Routes are cached per (source, destination); hop counts towards each
// destination are computed once, when first needed.
#include "tessera/topologies/routing.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "adjacency.hpp"
#include "tessera/core/error.hpp"

namespace tessera::topo {

namespace {

// splitmix64's finaliser: a fixed, well-mixed hash (std::hash differs between libraries).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t pair_key(int32_t src_gpu, int32_t dst_gpu) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(src_gpu)) << 32) | static_cast<uint32_t>(dst_gpu);
}

}  // namespace

struct Router::Impl {
  explicit Impl(const Topology& network)
      : topology(network),
        outgoing(detail::Adjacency::of(network, true)),
        relay(detail::relay_vertices(network)),
        hops_to_gpu(static_cast<size_t>(network.gpu_count())),
        block_size(std::max<size_t>(size_t{1} << 16, static_cast<size_t>(network.vertex_count()))) {
    if (topology.shape == TopologyShape::torus) {
      int64_t product = 1;
      for (int32_t k : topology.torus_dims) product *= k;
      if (topology.torus_dims.empty() || product != topology.gpu_count()) {
        throw std::logic_error("torus '" + topology.name + "': torus_dims do not multiply to the GPU count");
      }
    }
  }

  std::span<const int32_t> route(int32_t src_gpu, int32_t dst_gpu) {
    auto cached = routes.find(pair_key(src_gpu, dst_gpu));
    if (cached != routes.end()) return cached->second;
    path.clear();
    switch (topology.shape) {
      case TopologyShape::ring: walk_ring(src_gpu, dst_gpu); break;
      case TopologyShape::torus: walk_torus(src_gpu, dst_gpu); break;
      case TopologyShape::fully_connected:
        if (int32_t direct = edge_between(vertex_of(src_gpu), vertex_of(dst_gpu)); direct >= 0) {
          path.push_back(direct);
          break;
        }
        [[fallthrough]];
      case TopologyShape::hierarchical: walk_pxn(src_gpu, dst_gpu); break;  // shortest unless PXN applies
      default: walk_shortest(src_gpu, dst_gpu); break;
    }
    std::span<const int32_t> stored = store(path);
    routes.emplace(pair_key(src_gpu, dst_gpu), stored);
    return stored;
  }

  int32_t vertex_of(int32_t gpu) const { return topology.gpu_vertex(gpu); }

  // The first link from `from` to `to` in link order, or -1.
  int32_t edge_between(int32_t from, int32_t to) const {
    for (size_t i = outgoing.begin(from); i < outgoing.end(from); ++i) {
      if (outgoing.neighbour[i] == to) return outgoing.edge[i];
    }
    return -1;
  }

  // Appends the link between two neighbouring GPUs of a ring or torus.
  void step(int32_t from_gpu, int32_t to_gpu) {
    const int32_t edge = edge_between(vertex_of(from_gpu), vertex_of(to_gpu));
    if (edge < 0) {
      throw std::logic_error("'" + topology.name + "': no link from GPU " + std::to_string(from_gpu) + " to GPU " +
                             std::to_string(to_gpu) + " although the shape says they are neighbours");
    }
    path.push_back(edge);
  }

  void walk_ring(int32_t src_gpu, int32_t dst_gpu) {
    const int32_t n = topology.gpu_count();
    const int32_t forward = ((dst_gpu - src_gpu) % n + n) % n;
    const bool go_forward = !topology.bidirectional_ring || forward <= n - forward;  // ties: forward
    const int32_t steps = go_forward ? forward : n - forward, direction = go_forward ? 1 : n - 1;
    for (int32_t s = 0, at = src_gpu; s < steps; ++s) {
      const int32_t next = (at + direction) % n;
      step(at, next);
      at = next;
    }
  }

  // Dimension 0 first; in each dimension the shorter way round (ties: the positive direction).
  void walk_torus(int32_t src_gpu, int32_t dst_gpu) {
    int32_t at = src_gpu, stride = 1;
    for (int32_t k : topology.torus_dims) {
      const int32_t from = (at / stride) % k, to = (dst_gpu / stride) % k;
      const int32_t forward = ((to - from) % k + k) % k;
      const bool go_forward = forward <= k - forward;
      const int32_t steps = go_forward ? forward : k - forward;
      for (int32_t s = 0; s < steps; ++s) {
        const int32_t coordinate = (at / stride) % k;
        const int32_t next_coordinate = go_forward ? (coordinate + 1) % k : (coordinate + k - 1) % k;
        const int32_t next = at + (next_coordinate - coordinate) * stride;
        step(at, next);
        at = next;
      }
      stride *= k;
    }
  }

  // Shortest hop path; at every vertex the next hop is picked among the equally short ones by a
  // hash of (source, destination, vertex), so routes spread over parallel paths yet repeat.
  void walk_shortest(int32_t src_gpu, int32_t dst_gpu) {
    const std::vector<uint16_t>& hops = hops_to(dst_gpu);
    const int32_t target = vertex_of(dst_gpu);
    int32_t at = vertex_of(src_gpu);
    if (hops[static_cast<size_t>(at)] == detail::kUnreached) {
      throw UserError("'" + topology.name + "': GPU " + std::to_string(src_gpu) + " cannot reach GPU " +
                      std::to_string(dst_gpu));
    }
    const uint64_t pair_hash = mix(pair_key(src_gpu, dst_gpu));
    while (at != target) {
      const uint16_t wanted = static_cast<uint16_t>(hops[static_cast<size_t>(at)] - 1);
      const uint64_t hash = mix(pair_hash ^ static_cast<uint64_t>(at));
      if (wanted == 0) {
        // One hop short: the usable links are `at`'s links into the target, found among the
        // target's in-links (a few) rather than `at`'s out-links (P at the uniform network's
        // star switch), in the same link order, so the same one is picked. Every route ends so.
        const size_t entry =
            pick_entry(incoming, target, hash, [&](size_t i) { return incoming.neighbour[i] == at; });
        path.push_back(incoming.edge[entry]);
        return;
      }
      const size_t entry = pick_entry(outgoing, at, hash, [&](size_t i) {
        const int32_t v = outgoing.neighbour[i];
        return hops[static_cast<size_t>(v)] == wanted && (v == target || relay[static_cast<size_t>(v)]);
      });
      path.push_back(outgoing.edge[entry]);
      at = outgoing.neighbour[entry];
    }
  }

  // Of `vertex`'s entries in `adjacency` that `usable` accepts, in link order, the one `hash`
  // picks: its index into the adjacency's arrays.
  template <typename Usable>
  size_t pick_entry(const detail::Adjacency& adjacency, int32_t vertex, uint64_t hash, Usable usable) const {
    uint64_t choices = 0;
    for (size_t i = adjacency.begin(vertex); i < adjacency.end(vertex); ++i) choices += usable(i) ? 1 : 0;
    if (choices == 0) throw std::logic_error("'" + topology.name + "': hop counts lead nowhere");
    uint64_t pick = hash % choices;
    size_t i = adjacency.begin(vertex);
    for (;; ++i)
      if (usable(i) && pick-- == 0) break;
    return i;
  }

  // Hierarchical clusters: shortest paths, except PXN's two legs when a proxy applies: the
  // NVSwitch inside the server, then NIC, rail leaf (spines only between leaf groups of the
  // same rail), NIC, GPU.
  void walk_pxn(int32_t src_gpu, int32_t dst_gpu) {
    const int32_t proxy_gpu = pxn_proxy(src_gpu, dst_gpu);
    if (proxy_gpu < 0) return walk_shortest(src_gpu, dst_gpu);
    walk_shortest(src_gpu, proxy_gpu);
    walk_shortest(proxy_gpu, dst_gpu);
  }

  // Under PXN, between servers: the source server's GPU with the destination's local index
  // (GPU node * g + local in a hierarchical cluster), unless the source shares its NIC.
  int32_t pxn_proxy(int32_t src_gpu, int32_t dst_gpu) const {
    if (topology.shape != TopologyShape::hierarchical || topology.routing != RoutingPolicy::pxn) return -1;
    const int32_t src_node = topology.node_of(src_gpu);
    if (src_node == topology.node_of(dst_gpu)) return -1;
    const int32_t proxy_gpu = src_node * topology.gpus_per_node + dst_gpu % topology.gpus_per_node;
    if (proxy_gpu == src_gpu || nic_of(src_gpu) == nic_of(proxy_gpu)) return -1;
    return proxy_gpu;
  }

  // The first NIC a GPU is cabled to (several GPUs share one when a server has fewer NICs
  // than GPUs); -1 when it has none.
  int32_t nic_of(int32_t gpu) const {
    const int32_t v = vertex_of(gpu);
    for (size_t i = outgoing.begin(v); i < outgoing.end(v); ++i)
      if (topology.vertex(outgoing.neighbour[i]).kind == VertexKind::nic) return outgoing.neighbour[i];
    return -1;
  }

  const std::vector<uint16_t>& hops_to(int32_t dst_gpu) {
    std::vector<uint16_t>& hops = hops_to_gpu[static_cast<size_t>(dst_gpu)];
    if (hops.empty()) {
      if (incoming.row_start.empty()) incoming = detail::Adjacency::of(topology, false);
      detail::hop_counts(incoming, relay, vertex_of(dst_gpu), hops);
    }
    return hops;
  }

  // Copies a route into fixed blocks, so spans handed out earlier stay valid.
  std::span<const int32_t> store(const std::vector<int32_t>& route) {
    if (route.empty()) return {};
    if (blocks.empty() || block_used + route.size() > block_size) {
      blocks.push_back(std::make_unique<int32_t[]>(block_size));
      block_used = 0;
    }
    int32_t* begin = blocks.back().get() + block_used;
    std::copy(route.begin(), route.end(), begin);
    block_used += route.size();
    return {begin, route.size()};
  }

  const Topology& topology;
  detail::Adjacency outgoing, incoming;  // incoming: built on first shortest-path route
  std::vector<char> relay;
  std::vector<std::vector<uint16_t>> hops_to_gpu;  // per destination GPU, empty until needed
  std::unordered_map<uint64_t, std::span<const int32_t>> routes;
  std::vector<std::unique_ptr<int32_t[]>> blocks;
  size_t block_size;
  size_t block_used = 0;
  std::vector<int32_t> path;  // the route being walked
};

void set_routing(Topology& topology, const std::string& routing) {
  if (routing.empty()) return;
  if (routing == "ecmp") {
    topology.routing = RoutingPolicy::ecmp;
  } else if (routing == "pxn") {
    if (!topology.rail_optimized)
      throw UserError("--routing pxn: '" + topology.name +
                      "' is not a rail-optimised cluster of several servers (PXN needs rails; use ecmp)");
    topology.routing = RoutingPolicy::pxn;
  } else {
    throw UserError("--routing: unknown routing '" + routing + "' (expected pxn or ecmp)");
  }
}

Router::Router(const Topology& topology) : topology_(topology), impl_(std::make_shared<Impl>(topology)) {}

std::span<const int32_t> Router::route(int32_t src_gpu, int32_t dst_gpu) {
  const int32_t n = topology_.gpu_count();
  if (src_gpu < 0 || src_gpu >= n || dst_gpu < 0 || dst_gpu >= n) {
    throw std::out_of_range("route from GPU " + std::to_string(src_gpu) + " to GPU " + std::to_string(dst_gpu) +
                            ": GPUs are 0.." + std::to_string(n - 1));
  }
  if (src_gpu == dst_gpu) return {};
  return impl_->route(src_gpu, dst_gpu);
}

int32_t Router::pxn_proxy(int32_t src_gpu, int32_t dst_gpu) const {
  const int32_t n = topology_.gpu_count();
  if (src_gpu < 0 || src_gpu >= n || dst_gpu < 0 || dst_gpu >= n) return -1;
  return impl_->pxn_proxy(src_gpu, dst_gpu);
}

}  // namespace tessera::topo
