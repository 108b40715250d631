// PXN routing on rail-optimised clusters against hand counts: a transfer between servers crosses
// the NVSwitch to the GPU with the destination's local index, leaves through that GPU's NIC
// and stays on the destination's rail; ECMP (each GPU's own NIC, hashed over the spines) stays
// available. Bytes per link are summed over routes, as compute_link_loads does.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/metrics.hpp"
#include "tessera/topologies/routing.hpp"

using namespace tessera;
using namespace tessera::topo;
using Catch::Contains;

namespace {

// 8 servers x 4 GPUs, 4 rail-optimised NICs, leaves of 4 ports: 2 groups of 4 servers, leaf
// "leaf<4 * group + rail>" per rail per group, 4 spines.
HierarchicalSpec small_fat_tree() {
  HierarchicalSpec spec;
  spec.nodes = 8;
  spec.gpus_per_node = 4;
  spec.nics_per_node = 4;
  spec.leaf_down_ports = 4;
  return spec;
}

VertexKind kind_of(const Topology& topology, int32_t vertex) { return topology.vertex(vertex).kind; }

// Bytes on every directed link when each (source GPU, destination GPU, bytes) is routed.
std::vector<int64_t> link_bytes(const Topology& topology, const std::vector<std::pair<int32_t, int32_t>>& transfers,
                                int64_t bytes) {
  Router router(topology);
  std::vector<int64_t> on_edge(static_cast<size_t>(topology.link_count()), 0);
  for (const auto& [src, dst] : transfers)
    for (int32_t edge : router.route(src, dst)) on_edge[static_cast<size_t>(edge)] += bytes;
  return on_edge;
}

// The largest and the summed bytes over the links from a `from` vertex to a `to` vertex.
struct LinkFigures {
  int64_t most = 0;
  int64_t total = 0;
};
LinkFigures between(const Topology& topology, const std::vector<int64_t>& on_edge, VertexKind from, VertexKind to) {
  LinkFigures figures;
  for (int32_t link = 0; link < topology.link_count(); ++link) {
    if (kind_of(topology, topology.link_source(link)) != from) continue;
    if (kind_of(topology, topology.link_target(link)) != to) continue;
    figures.most = std::max(figures.most, on_edge[static_cast<size_t>(link)]);
    figures.total += on_edge[static_cast<size_t>(link)];
  }
  return figures;
}

// The bytes on the directed link between two named vertices.
int64_t on_link(const Topology& topology, const std::vector<int64_t>& on_edge, const std::string& from,
                const std::string& to) {
  for (int32_t link = 0; link < topology.link_count(); ++link) {
    if (topology.vertex(topology.link_source(link)).name == from &&
        topology.vertex(topology.link_target(link)).name == to)
      return on_edge[static_cast<size_t>(link)];
  }
  FAIL("no link " << from << " -> " << to);
  return -1;
}

// A rank-order ring over every GPU: GPU g sends to GPU g + 1 (the last to the first).
std::vector<std::pair<int32_t, int32_t>> rank_order_ring(int32_t gpus) {
  std::vector<std::pair<int32_t, int32_t>> transfers;
  for (int32_t gpu = 0; gpu < gpus; ++gpu) transfers.emplace_back(gpu, (gpu + 1) % gpus);
  return transfers;
}

}  // namespace

TEST_CASE("routing: PXN is the default on rail-optimised clusters, ECMP stays available", "[routing][pxn]") {
  Topology cluster = load_topology("h100-ib:4");
  CHECK(cluster.rail_optimized);
  CHECK(cluster.routing == RoutingPolicy::pxn);
  set_routing(cluster, "");  // the topology's own
  CHECK(cluster.routing == RoutingPolicy::pxn);
  set_routing(cluster, "ecmp");
  CHECK(cluster.routing == RoutingPolicy::ecmp);
  const Topology copy = cluster;
  CHECK(copy.routing == RoutingPolicy::ecmp);
  CHECK(copy.rail_optimized);
  set_routing(cluster, "pxn");
  CHECK(cluster.routing == RoutingPolicy::pxn);
  CHECK_THROWS_WITH(set_routing(cluster, "ospf"), Contains("expected pxn or ecmp"));

  // No rails: one server (nothing leaves it), all NICs of a server on one leaf, a torus.
  HierarchicalSpec one_server;
  Topology server = build_hierarchical(one_server);
  CHECK_FALSE(server.rail_optimized);
  CHECK(server.routing == RoutingPolicy::ecmp);
  HierarchicalSpec one_leaf = small_fat_tree();
  one_leaf.rail_optimized = false;
  one_leaf.leaf_down_ports = 32;
  Topology shared_leaf = build_hierarchical(one_leaf);
  CHECK(shared_leaf.routing == RoutingPolicy::ecmp);
  CHECK_THROWS_AS(set_routing(shared_leaf, "pxn"), UserError);
  CHECK_THROWS_WITH(set_routing(server, "pxn"), Contains("not a rail-optimised cluster"));
  Topology torus = build_torus({4, 4}, 50e9, 1e-6);
  CHECK_THROWS_AS(set_routing(torus, "pxn"), UserError);
  CHECK_NOTHROW(set_routing(torus, "ecmp"));
}

TEST_CASE("routing: under PXN every route between servers stays on the destination's rail", "[routing][pxn]") {
  // Server of GPU g: g / 4, its local index (and rail) g % 4, its leaf group server / 4.
  //  - same local index: the source's own NIC is on the rail: GPU-NIC-leaf-NIC-GPU (4 hops),
  //    plus leaf-spine-leaf between groups (6);
  //  - otherwise first GPU-NVSwitch-proxy (2 more hops), the proxy being the source server's
  //    GPU with the destination's local index: 6 in a group, 8 between groups.
  const HierarchicalSpec spec = small_fat_tree();
  Topology cluster = build_hierarchical(spec);
  Router router(cluster);
  for (int32_t src = 0; src < 32; ++src) {
    for (int32_t dst = 0; dst < 32; ++dst) {
      const int32_t src_server = src / 4, dst_server = dst / 4, rail = dst % 4;
      if (src_server == dst_server) {
        CHECK(router.hops(src, dst) == (src == dst ? 0 : 2));
        CHECK(router.pxn_proxy(src, dst) == -1);
        continue;
      }
      const bool proxied = src % 4 != rail, across_groups = src_server / 4 != dst_server / 4;
      const int32_t proxy = proxied ? src_server * 4 + rail : -1;
      CHECK(router.pxn_proxy(src, dst) == proxy);
      CHECK(router.hops(src, dst) == 4 + (across_groups ? 2 : 0) + (proxied ? 2 : 0));

      std::vector<int32_t> visited{cluster.gpu_vertex(src)};
      double latency_s = 0;
      for (int32_t edge : router.route(src, dst)) {
        REQUIRE(cluster.link_source(edge) == visited.back());
        visited.push_back(cluster.link_target(edge));
        latency_s += cluster.link(edge).latency_s;
      }
      REQUIRE(visited.back() == cluster.gpu_vertex(dst));
      const std::string src_leaf = "leaf" + std::to_string(4 * (src_server / 4) + rail);
      const std::string dst_leaf = "leaf" + std::to_string(4 * (dst_server / 4) + rail);
      for (size_t i = 1; i + 1 < visited.size(); ++i) {
        const VertexInfo& vertex = cluster.vertex(visited[i]);
        if (vertex.kind == VertexKind::gpu) CHECK(vertex.gpu == proxy);  // the only GPU relaying
        if (vertex.kind == VertexKind::leaf) CHECK((vertex.name == src_leaf || vertex.name == dst_leaf));
      }
      // NVLink twice when proxied, a NIC at each end, each switch crossed once.
      const double expected_s = (proxied ? 2 * spec.nvlink_latency_s : 0) + 2 * spec.nic_latency_s +
                                (across_groups ? 3 : 1) * spec.switch_latency_s;
      CHECK(latency_s == Approx(expected_s));
    }
  }
  // The longest route: proxied, between groups.
  CHECK(measure(cluster).diameter_hops == 8);
  set_routing(cluster, "ecmp");
  CHECK(measure(cluster).diameter_hops == 6);
}

TEST_CASE("routing: under PXN a GPU that shares the rail's NIC goes straight", "[routing][pxn]") {
  // 2 servers x 8 GPUs on 2 NICs: GPUs 0-3 use NIC 0 (rail 0), GPUs 4-7 NIC 1 (rail 1).
  HierarchicalSpec spec;
  spec.nodes = 2;
  spec.gpus_per_node = 8;
  spec.nics_per_node = 2;
  Topology cluster = build_hierarchical(spec);
  Router router(cluster);
  // GPU 9 (local 1) is on rail 0, as GPU 0 is: GPU-NIC-leaf-NIC-GPU.
  CHECK(router.pxn_proxy(0, 9) == -1);
  CHECK(router.hops(0, 9) == 4);
  // GPU 12 (local 4) is on rail 1: over NVLink to GPU 4 (local 4), then its NIC 1.
  CHECK(router.pxn_proxy(0, 12) == 4);
  CHECK(router.hops(0, 12) == 6);
}

TEST_CASE("routing: a rank-order ring over h100-ib:4 under PXN uses one NIC per server and no spine",
          "[routing][pxn]") {
  // 4 servers x 8 GPUs, 8 rails, one leaf per rail (32 ports hold all 4 servers), 32 spines.
  // GPU g sends S to g + 1. Inside a server that is NVLink. The 4 hops between servers,
  // 8n + 7 -> 8(n + 1) (mod 32), go to local index 0:
  //  - PXN: GPU 8n+7 -> NVSwitch -> GPU 8n (the proxy) -> nic0 -> leaf0 -> nic0 of server n+1 ->
  //    GPU 8(n+1). So NIC 0 of every server carries exactly S out and S in (one ring's bytes),
  //    no other NIC carries anything, and no spine link does: X = 0. Every NVLink direction
  //    carries exactly S: GPU l -> NVSwitch for the hop to l + 1 (GPU 7: to its proxy), NVSwitch
  //    -> GPU l for the hop from l - 1 (GPU 0: as the proxy).
  //  - ECMP: GPU 8n+7 -> nic7 -> leaf7 -> a spine -> leaf0 -> nic0 -> GPU 8(n+1): 4 S up to the
  //    spines and 4 S down, and rail 7's NIC carries S out while rail 0's takes S in.
  const int64_t S = 1000000;
  Topology cluster = load_topology("h100-ib:4");
  const std::vector<int64_t> pxn = link_bytes(cluster, rank_order_ring(32), S);
  for (int32_t server = 0; server < 4; ++server) {
    const std::string node = "node" + std::to_string(server) + ".";
    CHECK(on_link(cluster, pxn, node + "nic0", "leaf0") == S);
    CHECK(on_link(cluster, pxn, "leaf0", node + "nic0") == S);
    CHECK(on_link(cluster, pxn, "gpu" + std::to_string(8 * server), node + "nic0") == S);
    CHECK(on_link(cluster, pxn, node + "nic0", "gpu" + std::to_string(8 * server)) == S);
  }
  CHECK(between(cluster, pxn, VertexKind::nic, VertexKind::leaf).total == 4 * S);  // only nic0s
  CHECK(between(cluster, pxn, VertexKind::leaf, VertexKind::nic).total == 4 * S);
  CHECK(between(cluster, pxn, VertexKind::leaf, VertexKind::spine).most == 0);
  CHECK(between(cluster, pxn, VertexKind::spine, VertexKind::leaf).most == 0);
  for (auto [from, to] : {std::pair{VertexKind::gpu, VertexKind::nvswitch}, {VertexKind::nvswitch, VertexKind::gpu}}) {
    const LinkFigures nvlink = between(cluster, pxn, from, to);
    CHECK(nvlink.most == S);
    CHECK(nvlink.total == 32 * S);
  }

  set_routing(cluster, "ecmp");
  const std::vector<int64_t> ecmp = link_bytes(cluster, rank_order_ring(32), S);
  CHECK(between(cluster, ecmp, VertexKind::leaf, VertexKind::spine).total == 4 * S);
  CHECK(between(cluster, ecmp, VertexKind::spine, VertexKind::leaf).total == 4 * S);
  for (int32_t server = 0; server < 4; ++server) {
    const std::string node = "node" + std::to_string(server) + ".";
    CHECK(on_link(cluster, ecmp, node + "nic7", "leaf7") == S);
    CHECK(on_link(cluster, ecmp, "leaf0", node + "nic0") == S);
    CHECK(on_link(cluster, ecmp, node + "nic0", "leaf0") == 0);
  }
}

TEST_CASE("routing: rings that change rail at every server load each NIC once under PXN", "[routing][pxn]") {
  // h100-ib:4; GPU (server n, local l) sends S to (n + 1, l + 1 mod 8): 8 rings of 4, each hop
  // to another server and another rail. PXN: proxy (n, l + 1), whose NIC l + 1 is the
  // destination's rail, so every NIC link carries exactly S each way and no spine carries
  // anything; every transfer also crosses the NVSwitch once each way. ECMP: all 32 transfers
  // go leaf l -> spine -> leaf l + 1: 32 S up to the spines and 32 S down.
  const int64_t S = 1000000;
  std::vector<std::pair<int32_t, int32_t>> transfers;
  for (int32_t server = 0; server < 4; ++server)
    for (int32_t local = 0; local < 8; ++local)
      transfers.emplace_back(server * 8 + local, ((server + 1) % 4) * 8 + (local + 1) % 8);
  Topology cluster = load_topology("h100-ib:4");
  const std::vector<int64_t> pxn = link_bytes(cluster, transfers, S);
  for (auto [from, to] : {std::pair{VertexKind::nic, VertexKind::leaf}, {VertexKind::leaf, VertexKind::nic}}) {
    const LinkFigures nic = between(cluster, pxn, from, to);
    CHECK(nic.most == S);
    CHECK(nic.total == 32 * S);  // 32 NICs, S each
  }
  CHECK(between(cluster, pxn, VertexKind::leaf, VertexKind::spine).most == 0);
  CHECK(between(cluster, pxn, VertexKind::gpu, VertexKind::nvswitch).total == 32 * S);

  set_routing(cluster, "ecmp");
  const std::vector<int64_t> ecmp = link_bytes(cluster, transfers, S);
  CHECK(between(cluster, ecmp, VertexKind::leaf, VertexKind::spine).total == 32 * S);
  CHECK(between(cluster, ecmp, VertexKind::spine, VertexKind::leaf).total == 32 * S);
  CHECK(between(cluster, ecmp, VertexKind::gpu, VertexKind::nvswitch).total == 0);
}

TEST_CASE("routing: a rank-order ring over two leaf groups (h100-ib:64) puts at most S on a spine link under PXN",
          "[routing][pxn]") {
  // 64 servers, leaves of 32 ports: servers 0-31 are group 0, 32-63 group 1; 16 leaves, 32
  // spines. The ring's 64 hops between servers all ride rail 0 (local index 0); two of them
  // change group: 255 -> 256 (leaf0 of group 0 -> a spine -> leaf 8, rail 0 of group 1) and
  // 511 -> 0 (back). Those are four distinct directed leaf-spine links whatever spines ECMP
  // picks: X = S, 2 S up and 2 S down in all.
  const int64_t S = 1000000;
  Topology cluster = load_topology("h100-ib:64");
  const std::vector<int64_t> pxn = link_bytes(cluster, rank_order_ring(512), S);
  const LinkFigures up = between(cluster, pxn, VertexKind::leaf, VertexKind::spine);
  const LinkFigures down = between(cluster, pxn, VertexKind::spine, VertexKind::leaf);
  CHECK(up.most == S);
  CHECK(down.most == S);
  CHECK(up.total == 2 * S);
  CHECK(down.total == 2 * S);
  CHECK(between(cluster, pxn, VertexKind::nic, VertexKind::leaf).most == S);
}
