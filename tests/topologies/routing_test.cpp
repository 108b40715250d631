// Routing against closed forms: hop counts equal the wrap-around Manhattan distance on tori
// (dimension 0 first, ties the positive way), rings go the shorter way, fat trees use
// GPU-NIC-leaf(-spine-leaf)-NIC-GPU under ECMP, whose choices repeat exactly and spread over
// spines; under PXN (rail_routing_test.cpp) a transfer between servers stays on one rail.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/routing.hpp"

using namespace tessera::topo;

namespace {

// The vertices a route visits, from the source GPU's to the destination GPU's; fails the test
// when a link does not start where the previous one ended.
std::vector<int32_t> vertices_along(const Topology& topology, int32_t src, int32_t dst,
                                    std::span<const int32_t> route) {
  std::vector<int32_t> visited{topology.gpu_vertex(src)};
  for (int32_t link : route) {
    REQUIRE(topology.link_source(link) == visited.back());
    visited.push_back(topology.link_target(link));
  }
  REQUIRE(visited.back() == topology.gpu_vertex(dst));
  return visited;
}

int32_t wrap_distance(int32_t a, int32_t b, int32_t k) {
  const int32_t apart = std::abs(a - b);
  return std::min(apart, k - apart);
}

int32_t coordinate(int32_t gpu, const std::vector<int32_t>& dims, size_t d) {
  int32_t stride = 1;
  for (size_t i = 0; i < d; ++i) stride *= dims[i];
  return (gpu / stride) % dims[d];
}

// The one dimension in which two neighbouring GPUs differ.
size_t changed_dimension(int32_t a, int32_t b, const std::vector<int32_t>& dims) {
  for (size_t d = 0; d < dims.size(); ++d) {
    if (coordinate(a, dims, d) != coordinate(b, dims, d)) return d;
  }
  FAIL("a hop between GPUs " << a << " and " << b << " changes no coordinate");
  return 0;
}

std::vector<int32_t> as_vector(std::span<const int32_t> route) { return {route.begin(), route.end()}; }

// 8 servers x 4 GPUs, 4 rail-optimised NICs, leaves of 4 ports (2 groups of 4 servers).
HierarchicalSpec small_fat_tree() {
  HierarchicalSpec spec;
  spec.nodes = 8;
  spec.gpus_per_node = 4;
  spec.nics_per_node = 4;
  spec.leaf_down_ports = 4;
  return spec;
}

}  // namespace

TEST_CASE("torus routes: hops are the wrap-around Manhattan distance, dimension 0 first", "[routing]") {
  for (const std::vector<int32_t>& dims : {std::vector<int32_t>{4, 4}, {3, 5}, {2, 3, 4}}) {
    Topology torus = build_torus(dims, 100e9, 1e-6);
    Router router(torus);
    for (int32_t src = 0; src < torus.gpu_count(); ++src) {
      for (int32_t dst = 0; dst < torus.gpu_count(); ++dst) {
        int32_t manhattan = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
          manhattan += wrap_distance(coordinate(src, dims, d), coordinate(dst, dims, d), dims[d]);
        }
        std::span<const int32_t> route = router.route(src, dst);
        CHECK(router.hops(src, dst) == manhattan);
        std::vector<int32_t> visited = vertices_along(torus, src, dst, route);
        size_t dimension = 0;
        for (size_t i = 1; i < visited.size(); ++i) {
          const size_t changed =
              changed_dimension(static_cast<int32_t>(visited[i - 1]), static_cast<int32_t>(visited[i]), dims);
          CHECK(changed >= dimension);  // never back to an earlier dimension
          dimension = changed;
        }
      }
    }
  }
}

TEST_CASE("torus routes: half-way ties go the positive way", "[routing]") {
  // 4 x 4: GPU 0 -> 2 (two steps in dimension 0) passes GPU 1, not GPU 3; 0 -> 8 passes 4.
  Topology torus = build_torus({4, 4}, 100e9, 1e-6);
  Router router(torus);
  CHECK(vertices_along(torus, 0, 2, router.route(0, 2)) == std::vector<int32_t>{0, 1, 2});
  CHECK(vertices_along(torus, 0, 8, router.route(0, 8)) == std::vector<int32_t>{0, 4, 8});
  CHECK(vertices_along(torus, 0, 3, router.route(0, 3)) == std::vector<int32_t>{0, 3});  // wrap
  CHECK(vertices_along(torus, 0, 10, router.route(0, 10)) == std::vector<int32_t>{0, 1, 2, 6, 10});
}

TEST_CASE("ring routes: the shorter way, ties forward; unidirectional rings forward only", "[routing]") {
  const int32_t n = 8;
  Topology both_ways = build_ring(n, 100e9, 1e-6, true);
  Topology one_way = build_ring(n, 100e9, 1e-6, false);
  Router both(both_ways), forward(one_way);
  for (int32_t src = 0; src < n; ++src) {
    for (int32_t dst = 0; dst < n; ++dst) {
      const int32_t ahead = (dst - src + n) % n;
      CHECK(both.hops(src, dst) == std::min(ahead, n - ahead));
      CHECK(forward.hops(src, dst) == ahead);
      vertices_along(both_ways, src, dst, both.route(src, dst));
      vertices_along(one_way, src, dst, forward.route(src, dst));
    }
  }
  CHECK(vertices_along(both_ways, 0, 4, both.route(0, 4)) == std::vector<int32_t>{0, 1, 2, 3, 4});
  CHECK(vertices_along(both_ways, 1, 7, both.route(1, 7)) == std::vector<int32_t>{1, 0, 7});
  Topology pair = build_ring(2, 100e9, 1e-6, true);
  Router two(pair);
  CHECK(two.hops(0, 1) == 1);
  CHECK(two.hops(1, 0) == 1);
}

TEST_CASE("switch and fully connected routes: 2 hops and 1 hop", "[routing]") {
  Topology star = build_switch(6, 100e9, 1e-6);
  Topology mesh = build_fully_connected(6, 100e9, 1e-6);
  Router through_switch(star), direct(mesh);
  for (int32_t src = 0; src < 6; ++src) {
    for (int32_t dst = 0; dst < 6; ++dst) {
      if (src == dst) {
        CHECK(through_switch.route(src, dst).empty());
        continue;
      }
      std::vector<int32_t> visited = vertices_along(star, src, dst, through_switch.route(src, dst));
      CHECK(visited.size() == 3);
      CHECK(star.vertex(visited[1]).kind == VertexKind::switch_);
      CHECK(direct.hops(src, dst) == 1);
      vertices_along(mesh, src, dst, direct.route(src, dst));
    }
  }
}

TEST_CASE("fat tree routes under ECMP: 2 hops in a server, 4 on a shared leaf, 6 through a spine", "[routing]") {
  // Rail r of a group of 4 servers shares leaf r: GPUs with the same local index in servers of
  // the same group meet at their leaf; every other pair of servers goes through a spine.
  Topology cluster = build_hierarchical(small_fat_tree());
  set_routing(cluster, "ecmp");
  Router router(cluster);
  for (int32_t src = 0; src < cluster.gpu_count(); ++src) {
    for (int32_t dst = 0; dst < cluster.gpu_count(); ++dst) {
      if (src == dst) continue;
      const int32_t src_node = src / 4, dst_node = dst / 4;
      int32_t expected = 6;
      if (src_node == dst_node) {
        expected = 2;
      } else if (src_node / 4 == dst_node / 4 && src % 4 == dst % 4) {
        expected = 4;
      }
      CHECK(router.hops(src, dst) == expected);
      // Latency: two NVLink hops in a server; else a NIC at each end and each switch crossed
      // once (a leaf, or leaf-spine-leaf).
      const HierarchicalSpec spec = small_fat_tree();
      double latency_s = 0;
      for (int32_t edge : router.route(src, dst)) {
        latency_s += cluster.link(edge).latency_s;
      }
      const double expected_latency_s =
          expected == 2 ? 2 * spec.nvlink_latency_s : 2 * spec.nic_latency_s + (expected - 3) * spec.switch_latency_s;
      CHECK(latency_s == Approx(expected_latency_s));
      std::vector<int32_t> visited = vertices_along(cluster, src, dst, router.route(src, dst));
      for (size_t i = 1; i + 1 < visited.size(); ++i) {
        CHECK(cluster.vertex(visited[i]).kind != VertexKind::gpu);  // GPUs do not relay
      }
    }
  }
}

TEST_CASE("ECMP: the same routes twice, from two routers and two builds", "[routing]") {
  Topology first = build_hierarchical(small_fat_tree());
  Topology second = build_hierarchical(small_fat_tree());
  set_routing(first, "ecmp");
  set_routing(second, "ecmp");
  Router a(first), b(first), c(second);
  for (int32_t src = 0; src < first.gpu_count(); ++src) {
    for (int32_t dst = 0; dst < first.gpu_count(); ++dst) {
      std::span<const int32_t> once = a.route(src, dst);
      std::span<const int32_t> again = a.route(src, dst);
      CHECK(once.data() == again.data());  // served from the cache
      CHECK(as_vector(once) == as_vector(b.route(src, dst)));
      CHECK(as_vector(once) == as_vector(c.route(src, dst)));
    }
  }
}

TEST_CASE("ECMP: routes between servers spread over every spine", "[routing]") {
  // 16 servers x 2 GPUs, 2 rails, leaves of 4 ports: 4 groups x 2 rails = 8 leaves, 4 spines.
  HierarchicalSpec spec;
  spec.nodes = 16;
  spec.gpus_per_node = 2;
  spec.nics_per_node = 2;
  spec.leaf_down_ports = 4;
  Topology cluster = build_hierarchical(spec);
  set_routing(cluster, "ecmp");
  Router router(cluster);
  std::map<int32_t, int32_t> routes_per_spine;
  int32_t through_spines = 0;
  for (int32_t src = 0; src < cluster.gpu_count(); ++src) {
    for (int32_t dst = 0; dst < cluster.gpu_count(); ++dst) {
      if (src == dst) continue;
      for (int32_t v : vertices_along(cluster, src, dst, router.route(src, dst))) {
        if (cluster.vertex(v).kind != VertexKind::spine) continue;
        ++routes_per_spine[v];
        ++through_spines;
      }
    }
  }
  REQUIRE(routes_per_spine.size() == 4);
  for (auto [spine, routes] : routes_per_spine) {
    INFO(cluster.vertex(spine).name << " carries " << routes << " of " << through_spines << " routes");
    CHECK(routes * 8 >= through_spines);  // at least half of an even share
  }
}

TEST_CASE("ECMP: parallel links into the destination share its routes, the same each time", "[routing]") {
  // 8 GPUs on one switch; the switch reaches GPU 0 over two parallel links. Every route to GPU 0
  // ends on one of the two (picked per pair), both carry some, and a second router agrees.
  Topology star;
  star.name = "star with a doubled port";
  const LinkInfo port{50e9, 1e-6, LinkClass::generic, 0, false};
  star.resource_bytes_per_s.push_back(50e9);
  std::vector<int32_t> gpu_vertex;
  for (int32_t gpu = 0; gpu < 8; ++gpu)
    gpu_vertex.push_back(star.add_vertex(VertexInfo{VertexKind::gpu, "gpu" + std::to_string(gpu), gpu, -1}));
  const int32_t hub = star.add_vertex(VertexInfo{VertexKind::switch_, "switch", -1, -1});
  std::vector<int32_t> into_gpu0;
  for (int32_t gpu = 0; gpu < 8; ++gpu) {
    star.add_link(gpu_vertex[static_cast<size_t>(gpu)], hub, port);
    const int32_t down = star.add_link(hub, gpu_vertex[static_cast<size_t>(gpu)], port);
    if (gpu == 0) into_gpu0 = {down, star.add_link(hub, gpu_vertex[0], port)};
  }
  Router router(star), again(star);
  std::map<int32_t, int32_t> routes_per_link;
  for (int32_t src = 1; src < 8; ++src) {
    const std::vector<int32_t> route = as_vector(router.route(src, 0));
    vertices_along(star, src, 0, route);
    REQUIRE(route.size() == 2);
    REQUIRE(std::find(into_gpu0.begin(), into_gpu0.end(), route.back()) != into_gpu0.end());
    ++routes_per_link[route.back()];
    CHECK(as_vector(again.route(src, 0)) == route);
  }
  CHECK(routes_per_link.size() == 2);
}

TEST_CASE("ECMP on a product network: both dimension orders occur, hops stay shortest", "[routing]") {
  // Switch of 4 (dimension 0) x ring of 4: GPU a + 4 b; hops = 2 [a differs] + ring distance in b.
  Topology network =
      build_from_dimensions({{DimensionKind::switch_, 4, 450e9, 1e-6}, {DimensionKind::ring, 4, 50e9, 5e-6}});
  Router router(network);
  int32_t switch_first = 0, ring_first = 0;
  for (int32_t src = 0; src < 16; ++src) {
    for (int32_t dst = 0; dst < 16; ++dst) {
      const int32_t expected = (src % 4 != dst % 4 ? 2 : 0) + wrap_distance(src / 4, dst / 4, 4);
      CHECK(router.hops(src, dst) == expected);
      if (src == dst) continue;
      std::vector<int32_t> visited = vertices_along(network, src, dst, router.route(src, dst));
      if (src % 4 == dst % 4 || src / 4 == dst / 4) continue;
      (network.vertex(visited[1]).kind == VertexKind::switch_ ? switch_first : ring_first) += 1;
    }
  }
  CHECK(switch_first > 0);
  CHECK(ring_first > 0);
}

TEST_CASE("Router: spans stay valid while more routes are cached; bad GPUs are refused", "[routing]") {
  Topology cluster = build_hierarchical(small_fat_tree());
  Router router(cluster);
  std::span<const int32_t> kept = router.route(0, 31);
  const std::vector<int32_t> expected = as_vector(kept);
  for (int32_t src = 0; src < cluster.gpu_count(); ++src) {
    for (int32_t dst = 0; dst < cluster.gpu_count(); ++dst) router.route(src, dst);
  }
  CHECK(as_vector(kept) == expected);
  CHECK_THROWS_AS(router.route(0, 32), std::out_of_range);
  CHECK_THROWS_AS(router.route(-1, 3), std::out_of_range);
}
