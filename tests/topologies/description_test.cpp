// Topology description files and presets: every preset loads with its GPU count, each form of
// file loads, and every bad file is rejected with its name, the line and what was expected.
#include "tessera/topologies/description.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tessera/core/error.hpp"

using namespace tessera;
using namespace tessera::topo;
using Catch::Contains;

namespace {

std::filesystem::path examples_dir() {
  // tests/topologies/description_test.cpp -> topologies/examples
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "topologies" / "examples";
}

// A file in the temporary directory, removed at the end of the test.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() / ("tessera_description_test_" + name)) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

const char* const kFourGpusOnASwitch = R"(# four GPUs on one switch
name: four
gpus: 4
switches: [sw0]
links:
  - {from: gpu0, to: sw0, bandwidth_gbps: 100, latency_us: 1, duplex: full}
  - {from: gpu1, to: sw0, bandwidth_gbps: 100, latency_us: 1}
  - {from: gpu2, to: sw0, bandwidth_gbps: 100, latency_us: 1}
  - {from: gpu3, to: sw0, bandwidth_gbps: 100, latency_us: 1, duplex: half}
)";

}  // namespace

TEST_CASE("topo::load_topology: every preset loads with its GPU count", "[description]") {
  // name, --gpus, expected GPUs, GPUs per server
  struct Case {
    std::string name;
    int32_t gpus, expected, per_node;
  };
  const std::vector<Case> cases = {
      {"h100-ib:2", 0, 16, 8},  {"h100-ib:4", 32, 32, 8},  {"h100-ib", 24, 24, 8}, {"a100-16x4", 0, 64, 4},
      {"h100-64x1", 64, 64, 1}, {"tpu-v4-like", 0, 64, 1}, {"ring-8", 0, 8, 1},    {"ring", 12, 12, 1},
      {"torus-4x4", 0, 16, 1},  {"torus-2x3x4", 0, 24, 1}, {"switch-5", 5, 5, 1},  {"full-6", 0, 6, 1},
  };
  for (const Case& c : cases) {
    INFO(c.name << " --gpus " << c.gpus);
    Topology topology = load_topology(c.name, c.gpus);
    CHECK(topology.gpu_count() == c.expected);
    CHECK(topology.name == c.name);
    if (c.per_node > 1) CHECK(topology.gpus_per_node == c.per_node);
  }
  // tpu-v4-like is a 3-D torus of 64 chips; the torus presets keep their dimensions.
  CHECK(load_topology("tpu-v4-like").torus_dims == std::vector<int32_t>{4, 4, 4});
  CHECK(load_topology("torus-2x3x4").torus_dims == std::vector<int32_t>{2, 3, 4});
  // Every listed preset is documented in one line.
  auto presets = list_presets();
  REQUIRE(presets.size() >= 8);
  for (const auto& preset : presets) {
    CHECK(!preset.summary.empty());
    CHECK(preset.summary.find('\n') == std::string::npos);
  }
}

TEST_CASE("topo::load_topology: A100 preset uses NVLink3 bandwidth per GPU", "[description]") {
  // a100-16x4: 300 GB/s per direction from each GPU into its server's NVLink fabric.
  Topology topology = load_topology("a100-16x4");
  double widest = 0;
  for (int32_t link : topology.out_links(topology.gpu_vertex(0)))
    widest = std::max(widest, topology.link(link).bytes_per_s);
  CHECK(widest == Approx(300e9));
}

TEST_CASE("topo::load_topology: bad preset names and sizes", "[description]") {
  REQUIRE_THROWS_WITH(load_topology("no-such-thing"), Contains("neither a preset") && Contains("no-such-thing"));
  REQUIRE_THROWS_WITH(load_topology("ring"), Contains("needs a size"));
  REQUIRE_THROWS_WITH(load_topology("ring-x"), Contains("'x' is not a GPU count"));
  REQUIRE_THROWS_WITH(load_topology("torus-4x"), Contains("torus-AxB"));
  REQUIRE_THROWS_WITH(load_topology("h100-ib", 12), Contains("multiple of 8"));
  // A preset with its own size must match the schedule, as a file must.
  REQUIRE_THROWS_WITH(load_topology("ring-8", 16), Contains("has 8 GPUs but the schedule has 16 ranks"));
}

TEST_CASE("topo::parse_topology_yaml: the three forms", "[description]") {
  SECTION("per-dimension shorthand: an 8-GPU switch times a ring of 4 is 32 GPUs") {
    Topology topology = parse_topology_yaml(R"(
name: two-level
dimensions:
  - {kind: switch, size: 8, bandwidth_gbps: 450, latency_us: 1}   # inside a server
  - {kind: ring, size: 4, bandwidth_gbps: 50, latency_us: 5}      # across servers
)",
                                            "shorthand.yaml");
    CHECK(topology.gpu_count() == 32);
    CHECK(topology.name == "two-level");
    CHECK(topology.source == "shorthand.yaml");
  }
  SECTION("hierarchical builder: 4 servers x 8 GPUs") {
    Topology topology = parse_topology_yaml(R"(builder: hierarchical
nodes: 4
gpus_per_node: 8
nvlink_gbps: 450
nics_per_node: 8
nic_gbps: 50
rail_optimized: true
oversubscription: 2
nic_latency_us: 3
)",
                                            "cluster.yaml");
    CHECK(topology.gpu_count() == 32);
    CHECK(topology.gpus_per_node == 8);
    CHECK(topology.shape == TopologyShape::hierarchical);
    CHECK(topology.name == "cluster");  // the file's stem when there is no name
    CHECK(topology.routing == RoutingPolicy::pxn);  // rails: NCCL's PXN unless the file says otherwise
  }
  SECTION("hierarchical builder: routing ecmp, and pxn refused without rails") {
    const std::string cluster = "builder: hierarchical\nnodes: 4\ngpus_per_node: 8\nnvlink_gbps: 450\n"
                                "nics_per_node: 8\nnic_gbps: 50\n";
    CHECK(parse_topology_yaml(cluster + "routing: ecmp\n", "c.yaml").routing == RoutingPolicy::ecmp);
    CHECK_THROWS_WITH(parse_topology_yaml(cluster + "routing: ospf\n", "c.yaml"),
                      Catch::Contains("c.yaml:7") && Catch::Contains("expected pxn or ecmp"));
    CHECK_THROWS_WITH(parse_topology_yaml(cluster + "rail_optimized: false\nrouting: pxn\n", "c.yaml"),
                      Catch::Contains("c.yaml:8") && Catch::Contains("not a rail-optimised cluster"));
  }
  SECTION("ring and torus builders") {
    CHECK(parse_topology_yaml("builder: ring\ngpus: 6\nbandwidth_gbps: 25\nlatency_us: 2\nbidirectional: false\n", "r")
              .gpu_count() == 6);
    Topology torus = parse_topology_yaml("builder: torus\ndims: [2, 4]\nbandwidth_gbps: 25\nlatency_us: 2\n", "t");
    CHECK(torus.gpu_count() == 8);
    CHECK(torus.torus_dims == std::vector<int32_t>{2, 4});
  }
  SECTION("explicit graph: four GPUs on a switch") {
    Topology topology = parse_topology_yaml(kFourGpusOnASwitch, "four.yaml");
    CHECK(topology.shape == TopologyShape::custom);
    CHECK(topology.gpu_count() == 4);
    CHECK(topology.vertex_count() == 5);
    // Four cables, two directed links each; full duplex: one capacity per direction (3 x 2),
    // half duplex: one capacity for both directions (1).
    REQUIRE(topology.link_count() == 8);
    CHECK(topology.resource_bytes_per_s.size() == 7);
    for (int32_t i = 0; i < topology.link_count(); ++i) {
      const LinkInfo& link = topology.link(i);
      CHECK(link.bytes_per_s == Approx(100e9));
      CHECK(link.latency_s == Approx(1e-6));
      CHECK(topology.resource_bytes_per_s[static_cast<size_t>(link.resource)] == Approx(100e9));
    }
    CHECK(topology.link(6).resource == topology.link(7).resource);
    CHECK(topology.link(0).resource != topology.link(1).resource);
    CHECK(topology.vertex(topology.gpu_vertex(2)).name == "gpu2");
    CHECK(topology.vertex(topology.gpu_vertex(2)).gpu == 2);
    CHECK(topology.link_name(6) == "gpu3->sw0");
    CHECK(topology.link_name(7) == "sw0->gpu3");
  }
}

TEST_CASE("topo::load_topology: the example files load", "[description]") {
  // name, GPUs
  const std::vector<std::pair<std::string, int32_t>> examples = {
      {"shorthand-2level.yaml", 32}, {"hierarchical-4x8.yaml", 32}, {"explicit-4gpu.yaml", 4}};
  for (const auto& [file, gpus] : examples) {
    INFO(file);
    const std::string path = (examples_dir() / file).string();
    CHECK(load_topology(path).gpu_count() == gpus);
    CHECK(load_topology(path, gpus).source == path);
  }
}

TEST_CASE("topo::parse_topology_yaml: bad files name the file, the line and what was expected", "[description]") {
  const std::string header = "gpus: 4\nswitches: [sw0]\nlinks:\n";  // links start on line 4
  auto link = [](const std::string& fields) { return "  - {" + fields + "}\n"; };
  const std::string good = link("from: gpu0, to: sw0, bandwidth_gbps: 100, latency_us: 1") +
                           link("from: gpu1, to: sw0, bandwidth_gbps: 100, latency_us: 1") +
                           link("from: gpu2, to: sw0, bandwidth_gbps: 100, latency_us: 1");

  SECTION("missing field") {
    std::string text = header + good + link("from: gpu3, to: sw0, latency_us: 1");
    REQUIRE_THROWS_WITH(parse_topology_yaml(text, "bad.yaml"),
                        Contains("bad.yaml:7:") && Contains("links[3]: missing field 'bandwidth'"));
  }
  SECTION("negative bandwidth") {
    std::string text = header + good + link("from: gpu3, to: sw0, bandwidth_gbps: -100, latency_us: 1");
    REQUIRE_THROWS_WITH(parse_topology_yaml(text, "bad.yaml"),
                        Contains("bad.yaml:7:") && Contains("bandwidth_gbps: -100 is not a positive number"));
  }
  SECTION("zero bandwidth in a builder") {
    REQUIRE_THROWS_WITH(parse_topology_yaml("builder: ring\ngpus: 4\nbandwidth_gbps: 0\nlatency_us: 1\n", "bad.yaml"),
                        Contains("bad.yaml:3:") && Contains("not a positive number"));
  }
  SECTION("unknown GPU in a link") {
    std::string text = header + good + link("from: gpu7, to: sw0, bandwidth_gbps: 100, latency_us: 1");
    REQUIRE_THROWS_WITH(parse_topology_yaml(text, "bad.yaml"), Contains("bad.yaml:7:") &&
                                                                   Contains("unknown GPU or switch 'gpu7'") &&
                                                                   Contains("gpu0 to gpu3"));
  }
  SECTION("disconnected graph: gpu3 has no link") {
    std::string text = header + good;
    REQUIRE_THROWS_WITH(parse_topology_yaml(text, "bad.yaml"),
                        Contains("bad.yaml:4:") && Contains("connect every GPU"));
  }
  SECTION("unknown key") {
    std::string text = header + good + link("from: gpu3, to: sw0, bandwidth_gbps: 100, latency_us: 1, colour: red");
    REQUIRE_THROWS_WITH(parse_topology_yaml(text, "bad.yaml"),
                        Contains("bad.yaml:7:") && Contains("unknown key 'colour'") && Contains("expected one of"));
    REQUIRE_THROWS_WITH(parse_topology_yaml("builder: ring\ngpus: 4\nbandwith_gbps: 50\nlatency_us: 1\n", "typo.yaml"),
                        Contains("typo.yaml:3:") && Contains("unknown key 'bandwith_gbps'"));
  }
  SECTION("not YAML") {
    REQUIRE_THROWS_WITH(parse_topology_yaml("gpus: 4\nlinks: [\n  {from: gpu0\n", "bad.yaml"),
                        Contains("bad.yaml:") && Contains("not valid YAML"));
    REQUIRE_THROWS_WITH(parse_topology_yaml("just some words\n", "words.txt"),
                        Contains("words.txt:1:") && Contains("expected a mapping"));
  }
  SECTION("unknown builder and dimension kind") {
    REQUIRE_THROWS_WITH(parse_topology_yaml("# a comment\nbuilder: dragonfly\n", "bad.yaml"),
                        Contains("bad.yaml:2:") && Contains("unknown builder 'dragonfly'"));
    REQUIRE_THROWS_WITH(
        parse_topology_yaml("dimensions:\n  - {kind: mesh, size: 4, bandwidth_gbps: 1, latency_us: 1}\n", "bad.yaml"),
        Contains("bad.yaml:2:") && Contains("unknown kind 'mesh'"));
  }
  SECTION("a builder's own check gets the file and line") {
    // A torus dimension of 0 GPUs is refused by the builder or by the reader; either way the
    // message points into the file.
    REQUIRE_THROWS_WITH(
        parse_topology_yaml("builder: torus\ndims: [4, 0]\nbandwidth_gbps: 1\nlatency_us: 1\n", "bad.yaml"),
        Contains("bad.yaml:2:"));
  }
}

TEST_CASE("topo::load_topology: a file whose size does not match the rank count", "[description]") {
  TempFile file("four.yaml", kFourGpusOnASwitch);
  const std::string path = file.path.string();
  CHECK(load_topology(path, 4).gpu_count() == 4);
  // `gpus: 4` is on line 3 of the file.
  REQUIRE_THROWS_WITH(load_topology(path, 8),
                      Contains(path + ":3:") && Contains("has 4 GPUs but the schedule has 8 ranks"));
  REQUIRE_THROWS_AS(load_topology(path, 8), UserError);
}

TEST_CASE("topo::to_dot: GPUs are boxes, switches ellipses, links labelled in GB/s", "[description]") {
  std::string dot = to_dot(parse_topology_yaml(kFourGpusOnASwitch, "four.yaml"));
  CHECK(dot.rfind("digraph", 0) == 0);
  CHECK(dot.find("\"gpu0\" [shape=box]") != std::string::npos);
  CHECK(dot.find("\"sw0\" [shape=ellipse]") != std::string::npos);
  // Each full-duplex cable is drawn once with arrows both ways.
  CHECK(dot.find("\"gpu0\" -> \"sw0\" [label=\"100 GB/s\", dir=both]") != std::string::npos);
  CHECK(dot.find("\"sw0\" -> \"gpu0\"") == std::string::npos);
  // Servers are clusters in a hierarchical network.
  CHECK(to_dot(load_topology("h100-ib:2")).find("subgraph cluster_node1") != std::string::npos);
}

TEST_CASE("topology bandwidths carry their unit; the old GB/s keys give the same links", "[description][units]") {
  // Every link's bandwidth, in link order.
  auto bandwidths = [](const Topology& topology) {
    std::vector<double> bytes_per_s;
    for (int32_t link = 0; link < topology.link_count(); ++link) bytes_per_s.push_back(topology.link(link).bytes_per_s);
    return bytes_per_s;
  };
  // 400 Gb/s = 400e9 / 8 = 50e9 B/s, the number the old `bandwidth_gbps: 50` gave.
  const Topology ring = parse_topology_yaml("builder: ring\ngpus: 4\nbandwidth: 400Gb/s\nlatency_us: 1\n", "new.yaml");
  REQUIRE(ring.link_count() > 0);
  for (double bytes_per_s : bandwidths(ring)) CHECK(bytes_per_s == 50e9);
  CHECK(bandwidths(ring) ==
        bandwidths(parse_topology_yaml("builder: ring\ngpus: 4\nbandwidth_gbps: 50\nlatency_us: 1\n", "old.yaml")));

  const std::string cluster = "builder: hierarchical\nnodes: 2\ngpus_per_node: 4\nnics_per_node: 4\n";
  const Topology spelled =
      parse_topology_yaml(cluster + "nvlink_bandwidth: 3.6Tb/s\nnic_bandwidth: 400Gb/s\n", "c.yaml");
  const Topology old = parse_topology_yaml(cluster + "nvlink_gbps: 450\nnic_gbps: 50\n", "c.yaml");
  const std::vector<double> old_bandwidths = bandwidths(old);
  CHECK(bandwidths(spelled) == old_bandwidths);
  CHECK(std::count(old_bandwidths.begin(), old_bandwidths.end(), 450e9) > 0);  // 3.6e12 / 8: NVLink
  CHECK(std::count(old_bandwidths.begin(), old_bandwidths.end(), 50e9) > 0);   // the NICs

  CHECK_THROWS_WITH(parse_topology_yaml("builder: ring\ngpus: 4\nbandwidth: 50\nlatency_us: 1\n", "bad.yaml"),
                    Contains("bad.yaml:3: bandwidth: '50' has no unit: write 50GB/s"));
  CHECK_THROWS_WITH(
      parse_topology_yaml("builder: ring\ngpus: 4\nbandwidth: 400Gb/s\nbandwidth_gbps: 50\nlatency_us: 1\n",
                          "bad.yaml"),
      Contains("bad.yaml:4: bandwidth_gbps: give bandwidth or bandwidth_gbps, not both"));
  CHECK_THROWS_WITH(parse_topology_yaml("dimensions:\n  - {kind: ring, size: 4, bandwidth: 50GiB/s, latency_us: 1}\n",
                                        "bad.yaml"),
                    Contains("bad.yaml:2: dimensions[0].bandwidth: '50GiB/s' has a binary prefix"));
}
