// Builders against closed forms: vertex, link and degree counts, diameter in route hops and
// bisection bandwidth (GPUs [0, n/2) to [n/2, n), one direction). B is the link bandwidth.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "tessera/core/error.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/routing.hpp"
#include "tessera/topologies/metrics.hpp"

using namespace tessera::topo;
using Catch::Matchers::Contains;

namespace {

constexpr double kB = 100e9;  // bytes/s of the uniform networks below
constexpr double kLatency = 1e-6;

std::string user_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const tessera::UserError& error) {
    return error.what();
  }
  return "(no UserError)";
}

size_t out_degree_of_gpu(const Topology& topology, int32_t gpu) { return topology.out_links(topology.gpu_vertex(gpu)).size(); }

size_t in_degree_of_gpu(const Topology& topology, int32_t gpu) { return topology.in_links(topology.gpu_vertex(gpu)).size(); }

// Every GPU has the same in- and out-degree.
void check_regular(const Topology& topology, size_t degree) {
  for (int32_t gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    CHECK(out_degree_of_gpu(topology, gpu) == degree);
    CHECK(in_degree_of_gpu(topology, gpu) == degree);
  }
}

// The fields every builder fills: one resource per link (all builders make full-duplex
// cables), every link listed once among its source's out-links and its target's in-links, GPU
// vertices in GPU order.
void check_fields(const Topology& topology) {
  REQUIRE(topology.resource_bytes_per_s.size() == static_cast<size_t>(topology.link_count()));
  std::set<int32_t> resources;
  for (int32_t i = 0; i < topology.link_count(); ++i) {
    const LinkInfo& link = topology.link(i);
    CHECK(link.bytes_per_s > 0);
    CHECK(link.resource >= 0);
    resources.insert(link.resource);
    CHECK(topology.resource_bytes_per_s[static_cast<size_t>(link.resource)] == link.bytes_per_s);
  }
  CHECK(resources.size() == static_cast<size_t>(topology.link_count()));
  std::vector<int32_t> seen_out(static_cast<size_t>(topology.link_count()), 0);
  std::vector<int32_t> seen_in(static_cast<size_t>(topology.link_count()), 0);
  for (int32_t v = 0; v < topology.vertex_count(); ++v) {
    for (int32_t link : topology.out_links(v)) {
      CHECK(topology.link_source(link) == v);
      ++seen_out[static_cast<size_t>(link)];
    }
    for (int32_t link : topology.in_links(v)) {
      CHECK(topology.link_target(link) == v);
      ++seen_in[static_cast<size_t>(link)];
    }
  }
  CHECK(seen_out == std::vector<int32_t>(static_cast<size_t>(topology.link_count()), 1));
  CHECK(seen_in == std::vector<int32_t>(static_cast<size_t>(topology.link_count()), 1));
  for (int32_t gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    const VertexInfo& vertex = topology.vertex(topology.gpu_vertex(gpu));
    CHECK(vertex.kind == VertexKind::gpu);
    CHECK(vertex.gpu == gpu);
    CHECK(vertex.node == gpu / topology.gpus_per_node);
  }
}

}  // namespace

TEST_CASE("build_ring: bidirectional rings of 8 and 7 GPUs", "[builders]") {
  // n cables = 2n directed links, degree 2, diameter floor(n/2); the halves are joined by two
  // cables, one of which points from the first half to the second: 2 B.
  for (int32_t n : {8, 7}) {
    Topology ring = build_ring(n, kB, kLatency, true);
    check_fields(ring);
    check_regular(ring, 2);
    CHECK(ring.shape == TopologyShape::ring);
    CHECK(ring.bidirectional_ring);
    TopologyMetrics metrics = measure(ring);
    CHECK(metrics.gpus == n);
    CHECK(metrics.switches == 0);
    CHECK(metrics.links == 2 * n);
    CHECK(metrics.diameter_hops == n / 2);
    CHECK(metrics.bisection_bytes_per_s == Approx(2 * kB));
  }
}

TEST_CASE("build_ring: unidirectional ring of 8 GPUs", "[builders]") {
  // n links, one out and one in per GPU, diameter n - 1, and one link from the first half
  // (GPU 3 -> GPU 4) into the second: B.
  Topology ring = build_ring(8, kB, kLatency, false);
  check_fields(ring);
  check_regular(ring, 1);
  CHECK_FALSE(ring.bidirectional_ring);
  TopologyMetrics metrics = measure(ring);
  CHECK(metrics.links == 8);
  CHECK(metrics.diameter_hops == 7);
  CHECK(metrics.bisection_bytes_per_s == Approx(kB));
}

TEST_CASE("build_ring: rings of 2 and 1 GPUs", "[builders]") {
  // Two GPUs share one cable (not two), so 2 links, 1 hop, B across.
  TopologyMetrics two = measure(build_ring(2, kB, kLatency, true));
  CHECK(two.links == 2);
  CHECK(two.diameter_hops == 1);
  CHECK(two.bisection_bytes_per_s == Approx(kB));
  TopologyMetrics one = measure(build_ring(1, kB, kLatency, true));
  CHECK(one.links == 0);
  CHECK(one.diameter_hops == 0);
  CHECK(one.bisection_bytes_per_s == 0);
}

TEST_CASE("build_torus: k-ary 2-D and 3-D tori", "[builders]") {
  SECTION("4 x 4: 2d = 4 links per GPU, diameter 2 floor(4/2) = 4, bisection 2k = 8 links") {
    Topology torus = build_torus({4, 4}, kB, kLatency);
    check_fields(torus);
    check_regular(torus, 4);
    CHECK(torus.shape == TopologyShape::torus);
    CHECK(torus.torus_dims == std::vector<int32_t>{4, 4});
    TopologyMetrics metrics = measure(torus);
    CHECK(metrics.gpus == 16);
    CHECK(metrics.links == 64);
    CHECK(metrics.diameter_hops == 4);
    CHECK(metrics.bisection_bytes_per_s == Approx(8 * kB));
    for (int32_t i = 0; i < torus.link_count(); ++i) CHECK(torus.link(i).link_class == LinkClass::torus);
  }
  SECTION("4 x 4 x 4: 6 links per GPU, diameter 6, bisection 2k^2 = 32 links") {
    TopologyMetrics metrics = measure(build_torus({4, 4, 4}, kB, kLatency));
    CHECK(metrics.gpus == 64);
    CHECK(metrics.links == 64 * 6);
    CHECK(metrics.diameter_hops == 6);
    CHECK(metrics.bisection_bytes_per_s == Approx(32 * kB));
  }
  SECTION("6 x 4: the halves split dimension 1, whose rings each cross twice: 2 x 6 links") {
    TopologyMetrics metrics = measure(build_torus({6, 4}, kB, kLatency));
    CHECK(metrics.links == 24 * 4);
    CHECK(metrics.diameter_hops == 3 + 2);
    CHECK(metrics.bisection_bytes_per_s == Approx(12 * kB));
  }
}

TEST_CASE("build_torus: dimensions of size 2 and 1 have one cable per pair and none", "[builders]") {
  // 2 x 3 x 4: per GPU 1 (size 2) + 2 + 2 links = 5; 24 x 5 = 120 links; diameter 1 + 1 + 2.
  // The halves are z < 2 and z >= 2 (z = dimension 2): 6 rings of 4, each crossed twice: 12 B.
  Topology torus = build_torus({2, 3, 4}, kB, kLatency);
  check_fields(torus);
  check_regular(torus, 5);
  TopologyMetrics metrics = measure(torus);
  CHECK(metrics.links == 120);
  CHECK(metrics.diameter_hops == 4);
  CHECK(metrics.bisection_bytes_per_s == Approx(12 * kB));

  // 2 x 2: 4 cables, 8 links, degree 2, diameter 2. 4 x 1 is a ring of 4.
  Topology square = build_torus({2, 2}, kB, kLatency);
  check_regular(square, 2);
  CHECK(measure(square).links == 8);
  CHECK(measure(square).diameter_hops == 2);
  TopologyMetrics flat = measure(build_torus({4, 1}, kB, kLatency));
  CHECK(flat.links == 8);
  CHECK(flat.diameter_hops == 2);
}

TEST_CASE("build_fully_connected: 6 GPUs", "[builders]") {
  // n (n - 1) = 30 links, degree 5, diameter 1; 3 x 3 ordered pairs cross the bisection.
  Topology mesh = build_fully_connected(6, kB, kLatency);
  check_fields(mesh);
  check_regular(mesh, 5);
  TopologyMetrics metrics = measure(mesh);
  CHECK(metrics.links == 30);
  CHECK(metrics.switches == 0);
  CHECK(metrics.diameter_hops == 1);
  CHECK(metrics.bisection_bytes_per_s == Approx(9 * kB));
}

TEST_CASE("build_switch: 8 and 7 GPUs on one switch", "[builders]") {
  // One switch vertex of degree n, 2n links, diameter 2, floor(n/2) uplinks of B across.
  for (int32_t n : {8, 7}) {
    Topology star = build_switch(n, kB, kLatency);
    check_fields(star);
    check_regular(star, 1);
    TopologyMetrics metrics = measure(star);
    CHECK(metrics.switches == 1);
    CHECK(metrics.links == 2 * n);
    CHECK(metrics.diameter_hops == 2);
    CHECK(metrics.bisection_bytes_per_s == Approx((n / 2) * kB));
    const int32_t hub = n;
    CHECK(star.vertex(hub).kind == VertexKind::switch_);
    CHECK(star.out_links(hub).size() == static_cast<size_t>(n));
  }
}

TEST_CASE("build_hierarchical: one server of 8 GPUs on NVSwitch", "[builders]") {
  // No NICs or leaves: 8 GPUs + 1 NVSwitch, 8 cables, diameter 2, 4 NVLinks across.
  HierarchicalSpec spec;
  spec.nodes = 1;
  Topology server = build_hierarchical(spec);
  check_fields(server);
  TopologyMetrics metrics = measure(server);
  CHECK(metrics.gpus == 8);
  CHECK(metrics.switches == 1);
  CHECK(metrics.links == 16);
  CHECK(metrics.diameter_hops == 2);
  CHECK(metrics.bisection_bytes_per_s == Approx(4 * spec.nvlink_bytes_per_s));
  for (int32_t link = 0; link < server.link_count(); ++link) {
    CHECK(server.link(link).link_class == LinkClass::nvlink);
    CHECK_FALSE(server.link(link).inter_node);
  }
}

TEST_CASE("build_hierarchical: rail-optimised fat tree, non-blocking and oversubscribed", "[builders]") {
  // 8 servers x 4 GPUs, 4 NICs of 50 GB/s, leaves of 4 ports: 2 groups of 4 servers, one leaf
  // per rail per group = 8 leaves. Oversubscription 1: 4 spines, each leaf 4 x 50 GB/s up.
  // Counts: 32 GPUs; 8 NVSwitches + 32 NICs + 8 leaves + 4 spines = 52 switches; cables
  // 32 NVLink + 32 PCIe + 32 NIC-leaf + 8 x 4 leaf-spine = 128, i.e. 256 links.
  // Diameter: under ECMP GPUs on different rails meet at a spine: GPU-NIC-leaf-spine-leaf-NIC-GPU
  // = 6; under PXN (the default) a transfer first crosses the NVSwitch to the GPU on the
  // destination's rail, 2 more hops, when that rail's leaves are in another group: 8.
  // Bisection: GPUs 0-15 are group 0; its 4 servers x 4 NICs x 50 GB/s = 800 GB/s cross, and
  // its leaves' uplinks carry the same 800 GB/s; oversubscription s divides the uplinks: 800/s.
  HierarchicalSpec spec;
  spec.nodes = 8;
  spec.gpus_per_node = 4;
  spec.nics_per_node = 4;
  spec.nic_bytes_per_s = 50e9;
  spec.leaf_down_ports = 4;
  spec.rail_optimized = true;
  for (double oversubscription : {1.0, 2.0, 4.0}) {
    spec.oversubscription = oversubscription;
    Topology cluster = build_hierarchical(spec);
    check_fields(cluster);
    CHECK(cluster.shape == TopologyShape::hierarchical);
    CHECK(cluster.gpus_per_node == 4);
    const int32_t spines = static_cast<int32_t>(4 / oversubscription);  // one per 50 GB/s of uplink
    TopologyMetrics metrics = measure(cluster);
    CHECK(metrics.gpus == 32);
    CHECK(metrics.switches == 8 + 32 + 8 + spines);
    CHECK(metrics.links == 2 * (32 + 32 + 32 + 8 * spines));
    CHECK(metrics.diameter_hops == 8);
    CHECK(metrics.bisection_bytes_per_s == Approx(800e9 / oversubscription));
    set_routing(cluster, "ecmp");
    CHECK(measure(cluster).diameter_hops == 6);
  }
}

TEST_CASE("build_hierarchical: an oversubscribed tree with one spine", "[builders]") {
  // 4 servers x 2 GPUs, 2 NICs, leaves of 2 ports, s = 2: 2 groups x 2 rails = 4 leaves, each
  // with 2 x 50 / 2 = 50 GB/s up, to ceil(2 / 2) = 1 spine. Halves = group 0 = servers 0-1:
  // (servers/2 = 2) x (2 NICs) x 50 GB/s / 2 = 100 GB/s. Diameter under PXN: NVSwitch to the
  // other rail's GPU, then GPU-NIC-leaf-spine-leaf-NIC-GPU: 8.
  HierarchicalSpec spec;
  spec.nodes = 4;
  spec.gpus_per_node = 2;
  spec.nics_per_node = 2;
  spec.nic_bytes_per_s = 50e9;
  spec.leaf_down_ports = 2;
  spec.oversubscription = 2;
  TopologyMetrics metrics = measure(build_hierarchical(spec));
  CHECK(metrics.switches == 4 + 8 + 4 + 1);
  CHECK(metrics.links == 2 * (8 + 8 + 8 + 4));
  CHECK(metrics.diameter_hops == 8);
  CHECK(metrics.bisection_bytes_per_s == Approx(100e9));
}

TEST_CASE("build_hierarchical: not rail-optimised, all NICs of a server on one leaf", "[builders]") {
  HierarchicalSpec spec;
  spec.nodes = 4;
  spec.gpus_per_node = 8;
  spec.nics_per_node = 8;
  spec.nic_bytes_per_s = 50e9;
  spec.rail_optimized = false;
  SECTION("32-port leaf holds all 4 servers: no spines, diameter GPU-NIC-leaf-NIC-GPU = 4") {
    // Halves = servers 0-1: their 16 NICs x 50 GB/s.
    spec.leaf_down_ports = 32;
    Topology cluster = build_hierarchical(spec);
    check_fields(cluster);
    TopologyMetrics metrics = measure(cluster);
    CHECK(metrics.switches == 4 + 32 + 1);
    CHECK(metrics.links == 2 * (32 + 32 + 32));
    CHECK(metrics.diameter_hops == 4);
    CHECK(metrics.bisection_bytes_per_s == Approx(800e9));
  }
  SECTION("16-port leaves hold 2 servers each: 2 leaves, 16 spines, diameter 6") {
    // Halves = servers 0-1 = leaf 0, whose 16 uplinks carry 16 x 50 GB/s.
    spec.leaf_down_ports = 16;
    TopologyMetrics metrics = measure(build_hierarchical(spec));
    CHECK(metrics.switches == 4 + 32 + 2 + 16);
    CHECK(metrics.links == 2 * (32 + 32 + 32 + 2 * 16));
    CHECK(metrics.diameter_hops == 6);
    CHECK(metrics.bisection_bytes_per_s == Approx(800e9));
  }
}

TEST_CASE("build_hierarchical: fewer or more NICs than GPUs", "[builders]") {
  HierarchicalSpec spec;
  spec.nodes = 2;
  spec.nic_bytes_per_s = 50e9;
  SECTION("8 GPUs share 2 NICs: GPUs 0-3 use NIC 0, 4-7 NIC 1; 2 x 50 GB/s between servers") {
    spec.gpus_per_node = 8;
    spec.nics_per_node = 2;
    Topology cluster = build_hierarchical(spec);
    check_fields(cluster);
    for (int32_t gpu = 0; gpu < 16; ++gpu) CHECK(out_degree_of_gpu(cluster, gpu) == 2);  // NVSwitch, NIC
    TopologyMetrics metrics = measure(cluster);
    CHECK(metrics.bisection_bytes_per_s == Approx(100e9));
    CHECK(metrics.diameter_hops == 6);  // different rails: through a spine
  }
  SECTION("1 GPU with 2 NICs: no NVSwitch, the GPU drives both") {
    spec.gpus_per_node = 1;
    spec.nics_per_node = 2;
    Topology cluster = build_hierarchical(spec);
    for (int32_t gpu = 0; gpu < 2; ++gpu) CHECK(out_degree_of_gpu(cluster, gpu) == 2);
    TopologyMetrics metrics = measure(cluster);
    CHECK(metrics.switches == 4 + 2 + 32);  // NICs, leaves (1 group x 2 rails), 32 spines
    CHECK(metrics.bisection_bytes_per_s == Approx(100e9));
    CHECK(metrics.diameter_hops == 4);  // both NICs reach the peer on their own rail's leaf
  }
}

TEST_CASE("build_hierarchical: link classes and which links cross servers", "[builders]") {
  HierarchicalSpec spec;
  spec.nodes = 2;
  Topology cluster = build_hierarchical(spec);
  for (int32_t l = 0; l < cluster.link_count(); ++l) {
    const LinkInfo& link = cluster.link(l);
    const VertexKind from = cluster.vertex(cluster.link_source(l)).kind;
    const VertexKind to = cluster.vertex(cluster.link_target(l)).kind;
    if (from == VertexKind::nvswitch || to == VertexKind::nvswitch) {
      CHECK(link.link_class == LinkClass::nvlink);
      CHECK(link.bytes_per_s == spec.nvlink_bytes_per_s);
      CHECK_FALSE(link.inter_node);
    } else if (from == VertexKind::gpu || to == VertexKind::gpu) {
      CHECK(link.link_class == LinkClass::pcie);
      CHECK(link.inter_node);
    } else {
      CHECK(link.link_class == LinkClass::network);
      CHECK(link.inter_node);
    }
  }
  for (int32_t gpu = 0; gpu < cluster.gpu_count(); ++gpu) CHECK(cluster.node_of(gpu) == gpu / 8);
}

TEST_CASE("build_from_dimensions: a switch of 4 inside servers, a ring of 4 across", "[builders]") {
  // 16 GPUs, GPU = a + 4 b. Four switches (one per b), 16 cables to them; four rings of 4 along
  // b, 16 cables: 64 links. Hops: 2 through the switch + ring distance in b: diameter 4.
  // Halves are b < 2: each ring is crossed by 2 links of the slow dimension: 8 x 50 GB/s.
  const std::vector<DimensionSpec> dimensions = {{DimensionKind::switch_, 4, 450e9, 1e-6},
                                                 {DimensionKind::ring, 4, 50e9, 5e-6}};
  Topology network = build_from_dimensions(dimensions);
  check_fields(network);
  CHECK(network.gpus_per_node == 4);
  CHECK(network.shape == TopologyShape::custom);
  TopologyMetrics metrics = measure(network);
  CHECK(metrics.gpus == 16);
  CHECK(metrics.switches == 4);
  CHECK(metrics.links == 64);
  CHECK(metrics.diameter_hops == 4);
  CHECK(metrics.bisection_bytes_per_s == Approx(400e9));
  for (int32_t l = 0; l < network.link_count(); ++l) {
    const LinkInfo& link = network.link(l);
    CHECK(link.inter_node == (link.bytes_per_s == 50e9));  // only the ring leaves a server
  }
}

TEST_CASE("build_from_dimensions: rings only make a torus; other mixes", "[builders]") {
  const DimensionSpec ring{DimensionKind::ring, 4, kB, kLatency};
  const std::vector<DimensionSpec> rings = {ring, ring};
  Topology torus = build_from_dimensions(rings);
  CHECK(torus.shape == TopologyShape::torus);
  CHECK(torus.torus_dims == std::vector<int32_t>{4, 4});
  CHECK(torus.gpus_per_node == 1);
  TopologyMetrics metrics = measure(torus);
  CHECK(metrics.links == 64);
  CHECK(metrics.diameter_hops == 4);
  CHECK(metrics.bisection_bytes_per_s == Approx(8 * kB));

  // Fully connected 4 x ring 3: 3 groups x 6 cables + 4 rings x 3 cables = 30 cables, degree
  // 3 + 2, diameter 1 + 1.
  const std::vector<DimensionSpec> mixed = {{DimensionKind::fully_connected, 4, kB, kLatency},
                                            {DimensionKind::ring, 3, kB, kLatency}};
  Topology product = build_from_dimensions(mixed);
  check_regular(product, 5);
  CHECK(measure(product).links == 60);
  CHECK(measure(product).diameter_hops == 2);

  // One switch dimension is a single switch.
  Topology star = build_from_dimensions({{DimensionKind::switch_, 8, kB, kLatency}});
  CHECK(star.shape == TopologyShape::single_switch);
  CHECK(measure(star).bisection_bytes_per_s == Approx(4 * kB));
}

TEST_CASE("Topology: copies and moves keep every link, its ends and its resource", "[builders]") {
  const Topology reference = build_torus({3, 3}, kB, kLatency);
  auto original = std::make_unique<Topology>(build_torus({3, 3}, kB, kLatency));
  Topology copy = *original;
  std::optional<Topology> assigned;
  assigned = Topology(*original);  // a move
  original.reset();                // nothing may still refer to the original
  for (const Topology* topology : {&copy, &*assigned}) {
    REQUIRE(topology->link_count() == 36);
    check_fields(*topology);
    for (int32_t i = 0; i < topology->link_count(); ++i) {
      CHECK(topology->link(i).resource == i);
      CHECK(topology->link_source(i) == reference.link_source(i));
      CHECK(topology->link_target(i) == reference.link_target(i));
    }
    CHECK(measure(*topology).diameter_hops == 2);
  }
}

TEST_CASE("Topology: GPUs are numbered in the order they are added; links need both ends", "[builders]") {
  Topology pair;
  CHECK(pair.add_vertex(VertexInfo{VertexKind::switch_, "hub", -1, -1}) == 0);
  CHECK(pair.add_vertex(VertexInfo{VertexKind::gpu, "gpu0", 0, 0}) == 1);
  CHECK_THROWS_AS(pair.add_vertex(VertexInfo{VertexKind::gpu, "gpu5", 5, 0}), std::invalid_argument);
  CHECK(pair.add_vertex(VertexInfo{VertexKind::gpu, "gpu1", 1, 0}) == 2);
  CHECK(pair.gpu_count() == 2);
  CHECK(pair.gpu_vertex(1) == 2);
  CHECK(pair.add_link(1, 0, LinkInfo{kB, 0, LinkClass::generic, 0, false}) == 0);
  CHECK(pair.add_link(0, 2, LinkInfo{kB, 0, LinkClass::generic, 1, false}) == 1);
  CHECK_THROWS_AS(pair.add_link(0, 3, LinkInfo{}), std::out_of_range);
  CHECK(pair.link_count() == 2);
  CHECK(pair.link_name(0) == "gpu0->hub");
  CHECK(pair.link_name(1) == "hub->gpu1");
  CHECK(std::vector<int32_t>(pair.out_links(0).begin(), pair.out_links(0).end()) == std::vector<int32_t>{1});
  CHECK(std::vector<int32_t>(pair.in_links(0).begin(), pair.in_links(0).end()) == std::vector<int32_t>{0});
}

TEST_CASE("builders reject bad arguments with a UserError naming the parameter", "[builders]") {
  SECTION("GPU counts") {
    CHECK_THAT(user_error_of([] { build_ring(0, kB, kLatency, true); }), Contains("ring: gpus must be at least 1"));
    CHECK_THAT(user_error_of([] { build_switch(-3, kB, kLatency); }), Contains("switch: gpus must be at least 1"));
    CHECK_THAT(user_error_of([] { build_fully_connected(0, kB, kLatency); }), Contains("gpus must be at least 1"));
    // 4097 x 4096 = 16,781,312 directed links, past the 2^24 = 16,777,216 supported; 4096 x 4095 is under.
    CHECK_THAT(user_error_of([] { build_fully_connected(4097, kB, kLatency); }),
               Contains("16781312 directed links is more than the 16777216 supported"));
  }
  SECTION("bandwidth and latency") {
    CHECK_THAT(user_error_of([] { build_ring(4, -1, kLatency, true); }), Contains("bandwidth must be positive"));
    CHECK_THAT(user_error_of([] { build_switch(4, 0, kLatency); }), Contains("bandwidth must be positive"));
    CHECK_THAT(user_error_of([] { build_torus({4}, kB, -1e-6); }), Contains("latency must be >= 0"));
  }
  SECTION("torus sizes") {
    CHECK_THAT(user_error_of([] { build_torus({4, 4, 0}, kB, kLatency); }),
               Contains("torus dimension 2 has size 0; sizes must be at least 1"));
    CHECK_THAT(user_error_of([] { build_torus({}, kB, kLatency); }), Contains("at least one dimension"));
  }
  SECTION("hierarchical fields") {
    auto with = [](auto change) {
      HierarchicalSpec spec;
      spec.nodes = 2;
      change(spec);
      return user_error_of([&] { build_hierarchical(spec); });
    };
    CHECK_THAT(with([](HierarchicalSpec& s) { s.oversubscription = 0.5; }), Contains("oversubscription must be >= 1"));
    CHECK_THAT(with([](HierarchicalSpec& s) { s.nodes = 0; }), Contains("nodes must be at least 1"));
    CHECK_THAT(with([](HierarchicalSpec& s) { s.gpus_per_node = 0; }), Contains("gpus_per_node must be at least 1"));
    CHECK_THAT(with([](HierarchicalSpec& s) { s.nics_per_node = 0; }), Contains("nics_per_node must be at least 1"));
    CHECK_THAT(with([](HierarchicalSpec& s) { s.leaf_down_ports = 0; }),
               Contains("leaf_down_ports must be at least 1"));
    CHECK_THAT(with([](HierarchicalSpec& s) { s.nvlink_bytes_per_s = -5; }),
               Contains("NVLink bandwidth must be positive"));
    CHECK_THAT(with([](HierarchicalSpec& s) { s.nic_bytes_per_s = 0; }), Contains("NIC bandwidth must be positive"));
    CHECK_THAT(with([](HierarchicalSpec& s) {
                 s.rail_optimized = false;
                 s.leaf_down_ports = 4;
               }),
               Contains("leaf_down_ports (4) must be at least nics_per_node (8)"));
  }
  SECTION("dimensions") {
    CHECK_THAT(user_error_of([] { build_from_dimensions({}); }), Contains("at least one dimension"));
    const DimensionSpec ring{DimensionKind::ring, 4, kB, 0}, empty_switch{DimensionKind::switch_, 0, kB, 0};
    CHECK_THAT(user_error_of([&] { build_from_dimensions({ring, empty_switch}); }),
               Contains("dimension 1 (switch) has size 0"));
    CHECK_THAT(user_error_of([] { build_from_dimensions({{DimensionKind::ring, 4, 0, 0}}); }),
               Contains("dimension 0 (ring): bandwidth must be positive"));
  }
}

TEST_CASE("check_connected names a GPU that cannot reach another", "[builders]") {
  // gpu0 -> gpu1 only: GPU 0 reaches GPU 1, but not the other way round.
  Topology one_way;
  one_way.name = "one-way";
  for (int32_t gpu = 0; gpu < 2; ++gpu) one_way.add_vertex(VertexInfo{VertexKind::gpu, "gpu", gpu, gpu});
  one_way.add_link(0, 1, LinkInfo{kB, 0, LinkClass::generic, 0, true});
  one_way.resource_bytes_per_s.push_back(kB);
  CHECK_THAT(user_error_of([&] { check_connected(one_way); }),
             Contains("topology 'one-way' is not connected: GPU 1 cannot reach GPU 0"));
  one_way.add_vertex(VertexInfo{VertexKind::gpu, "gpu2", 2, 2});
  one_way.add_link(1, 0, LinkInfo{kB, 0, LinkClass::generic, 1, true});
  one_way.resource_bytes_per_s.push_back(kB);
  CHECK_THAT(user_error_of([&] { check_connected(one_way); }), Contains("GPU 0 cannot reach GPU 2"));
  CHECK_THAT(user_error_of([] { check_connected(Topology{}); }), Contains("has no GPUs"));
}

TEST_CASE("the closed-form diameter of symmetric networks is their longest route", "[topo][builders][limits]") {
  // measure() no longer routes every pair of a ring, torus, switch or full connection (a ring
  // of 100k GPUs stored 5e9 link indices); its figure must still be the Router's longest route.
  std::vector<Topology> networks;
  for (int32_t n : {1, 2, 3, 8, 9}) {
    networks.push_back(build_ring(n, 1e9, 1e-6, true));
    networks.push_back(build_ring(n, 1e9, 1e-6, false));
    networks.push_back(build_switch(n, 1e9, 1e-6));
    networks.push_back(build_fully_connected(n, 1e9, 1e-6));
  }
  networks.push_back(build_torus({3, 4}, 1e9, 1e-6));
  networks.push_back(build_torus({2, 5, 1}, 1e9, 1e-6));
  for (const Topology& network : networks) {
    Router router(network);
    int32_t longest = 0;
    for (int32_t a = 0; a < network.gpu_count(); ++a)
      for (int32_t b = 0; b < network.gpu_count(); ++b) longest = std::max(longest, router.hops(a, b));
    INFO(network.name);
    CHECK(measure(network).diameter_hops == longest);
  }
}

TEST_CASE("builders refuse a network past the memory limit before adding a vertex", "[topo][builders][limits]") {
  setenv("TESSERA_MEMORY_LIMIT", "10MB", 1);
  // 100k GPUs: 100k x 600 B + 200k x 250 B = 110 MB.
  CHECK_THROWS_WITH(build_ring(100000, 1e9, 1e-6, true), Contains("more than the limit of 10 MB"));
  CHECK_THROWS_WITH(build_fully_connected(1000, 1e9, 1e-6), Contains("needs about 250 MB"));
  CHECK(build_ring(1000, 1e9, 1e-6, true).gpu_count() == 1000);
  unsetenv("TESSERA_MEMORY_LIMIT");
  CHECK(estimate_topology_bytes(10, 20) == 600 * 10 + 250 * 20);
}
