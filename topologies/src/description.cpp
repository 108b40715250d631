// Topology description files (YAML, so people can comment them) and the built-in presets.
// A file is one of three forms, told apart by its keys: `dimensions:` (the per-dimension
// shorthand), `builder:` (a named builder and its parameters) or `links:` (an explicit graph).
// Every error reads "FILE:LINE: what was wrong (what was expected)"; unknown keys are errors.
// Beyond the header's example, an explicit graph may set `gpus_per_node` (GPU i is in server
// i / gpus_per_node; default 1), give switches as {name, node, kind}, and give links a
// `class` (nvlink, pcie, network, torus, generic) and `duplex: simplex` (one direction only).
// topologies/examples/ has one commented file per form.
#include "tessera/topologies/description.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "tessera/core/deprecation.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/resource_limits.hpp"
#include "tessera/core/units.hpp"
#include "tessera/core/yaml_reader.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::topo {

namespace {

constexpr double kBytesPerGB = kBytesPerSecondPerGBps;
constexpr double kSecondsPerUs = 1e-6;

// The generic presets (ring-N, torus-AxB, switch-N, full-N) use the link of the analytical
// model's default hardware (README: 400 Gb/s InfiniBand per GPU, 5 us), so a preset and the
// uniform network can be compared like for like.
constexpr double kGenericBytesPerS = kDefaultNetworkLink.bytes_per_s;
constexpr double kGenericLatencyS = kDefaultNetworkLink.latency_s;

// The topology and the line of the node that sets its size, to point at when the size does
// not match the rank count.
struct Parsed {
  Topology topology;
  int line_of_size = 1;
};

// Runs a builder; its UserError (naming the parameter) gets the file and line in front: the
// line of the first key the message names, else the line of `at`.
template <typename Build>
Topology build_at(const YamlReader& reader, const YAML::Node& at, Build build) {
  try {
    return build();
  } catch (const UserError& error) {
    const std::string message = error.what();
    if (at.IsMap())
      for (auto it = at.begin(); it != at.end(); ++it)
        if (it->first.Scalar() != "name" && message.find(it->first.Scalar()) != std::string::npos)
          reader.fail(it->first, message);
    reader.fail(at, message);
  }
}

// A bandwidth: `key` with its unit (`bandwidth: 400Gb/s`; core/units.hpp), or the deprecated
// `gbps_key`, a bare number of GB/s (bytes), multiplied as NUMBER GB/s is, with a note naming
// FILE:LINE once per key per run. One of the two is required.
double bandwidth(const YamlReader& reader, const YAML::Node& map, const std::string& path, const std::string& key,
                 const std::string& gbps_key) {
  if (!reader.has(map, gbps_key)) {
    const YAML::Node node = reader.field(map, path, key);
    const std::string name = YamlReader::path_of(path, key);
    try {
      return parse_bandwidth_bytes_per_s(reader.text(node, name), name);
    } catch (const UserError& error) {
      reader.fail(node, error.what());
    }
  }
  const YAML::Node old = map[gbps_key];
  if (reader.has(map, key))
    reader.fail(old, YamlReader::path_of(path, gbps_key) + ": give " + key + " or " + gbps_key + ", not both");
  const double gbps = reader.positive(map, path, gbps_key);
  note_deprecated("topology:" + gbps_key, reader.source() + ":" + std::to_string(YamlReader::line_of(old)) + ": " +
                                              gbps_key + " is deprecated (a number of GB/s, bytes); write " + key +
                                              ": " + old.Scalar() + "GB/s");
  return gbps * kBytesPerGB;
}
double micros(const YamlReader& reader, const YAML::Node& map, const std::string& path, const std::string& key) {
  return reader.non_negative(map, path, key) * kSecondsPerUs;
}
// Optional latency with a default in seconds.
double micros_or(const YamlReader& reader, const YAML::Node& map, const std::string& key, double fallback_s) {
  return reader.has(map, key) ? micros(reader, map, "", key) : fallback_s;
}

// ---------------------------------------------------------------------------------------------
// Form 1: the per-dimension shorthand.

Parsed parse_dimensions(const YamlReader& reader, const YAML::Node& root) {
  reader.check_keys(root, {"name", "dimensions"}, "next to 'dimensions'");
  const YAML::Node list = root["dimensions"];
  if (!list.IsSequence() || list.size() == 0)
    reader.fail(list, "dimensions: expected a list of {kind, size, bandwidth, latency_us}");
  std::vector<DimensionSpec> dimensions;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node entry = list[i];
    const std::string path = "dimensions[" + std::to_string(i) + "]";
    reader.require_map(entry, path);
    reader.check_keys(entry, {"kind", "size", "bandwidth", "bandwidth_gbps", "latency_us"}, "in " + path);
    DimensionSpec spec;
    const std::string kind = reader.text(entry, path, "kind");
    if (kind == "ring") {
      spec.kind = DimensionKind::ring;
    } else if (kind == "switch") {
      spec.kind = DimensionKind::switch_;
    } else if (kind == "fully-connected") {
      spec.kind = DimensionKind::fully_connected;
    } else {
      reader.fail(entry["kind"],
                  path + ".kind: unknown kind '" + kind + "' (expected ring, switch or fully-connected)");
    }
    spec.size = reader.integer(entry, path, "size", 1);
    spec.bytes_per_s = bandwidth(reader, entry, path, "bandwidth", "bandwidth_gbps");
    spec.latency_s = micros(reader, entry, path, "latency_us");
    dimensions.push_back(spec);
  }
  return {build_at(reader, list, [&] { return build_from_dimensions(dimensions); }), YamlReader::line_of(list)};
}

// ---------------------------------------------------------------------------------------------
// Form 2: a named builder with its parameters (top-level keys).

Parsed parse_simple_builder(const YamlReader& reader, const YAML::Node& root, const std::string& kind) {
  std::vector<std::string> keys = {"name", "builder", "gpus", "bandwidth", "bandwidth_gbps", "latency_us"};
  if (kind == "ring") keys.push_back("bidirectional");
  reader.check_keys(root, keys, "for builder " + kind);
  const int32_t gpus = reader.integer(root, "", "gpus", 1);
  const double bytes_per_s = bandwidth(reader, root, "", "bandwidth", "bandwidth_gbps"),
               latency_s = micros(reader, root, "", "latency_us");
  const bool bidirectional = reader.flag(root, "", "bidirectional", true);
  Topology topology = build_at(reader, root, [&] {
    if (kind == "ring") return build_ring(gpus, bytes_per_s, latency_s, bidirectional);
    if (kind == "switch") return build_switch(gpus, bytes_per_s, latency_s);
    return build_fully_connected(gpus, bytes_per_s, latency_s);
  });
  return {std::move(topology), YamlReader::line_of(root["gpus"])};
}

Parsed parse_torus(const YamlReader& reader, const YAML::Node& root) {
  reader.check_keys(root, {"name", "builder", "dims", "bandwidth", "bandwidth_gbps", "latency_us"}, "for builder torus");
  const YAML::Node list = reader.field(root, "", "dims");
  if (!list.IsSequence() || list.size() == 0) reader.fail(list, "dims: expected a list of sizes, e.g. [4, 4]");
  std::vector<int32_t> dims;
  for (size_t i = 0; i < list.size(); ++i)
    dims.push_back(reader.integer(list[i], 1, "dims[" + std::to_string(i) + "]"));
  const double bytes_per_s = bandwidth(reader, root, "", "bandwidth", "bandwidth_gbps"),
               latency_s = micros(reader, root, "", "latency_us");
  return {build_at(reader, root, [&] { return build_torus(dims, bytes_per_s, latency_s); }), YamlReader::line_of(list)};
}

Parsed parse_hierarchical(const YamlReader& reader, const YAML::Node& root) {
  reader.check_keys(
      root,
      {"name", "builder", "nodes", "gpus_per_node", "nvlink_bandwidth", "nvlink_gbps", "nvlink_latency_us",
       "nics_per_node", "nic_bandwidth", "nic_gbps",
       "nic_latency_us", "rail_optimized", "leaf_down_ports", "oversubscription", "switch_latency_us", "routing"},
      "for builder hierarchical");
  // Sizes and bandwidths must be stated (a default would silently describe another machine);
  // latencies and the fabric's shape default to HierarchicalSpec's values.
  HierarchicalSpec spec;
  spec.nodes = reader.integer(root, "", "nodes", 1);
  spec.gpus_per_node = reader.integer(root, "", "gpus_per_node", 1);
  spec.nvlink_bytes_per_s = bandwidth(reader, root, "", "nvlink_bandwidth", "nvlink_gbps");
  spec.nics_per_node = reader.integer(root, "", "nics_per_node", 1);
  spec.nic_bytes_per_s = bandwidth(reader, root, "", "nic_bandwidth", "nic_gbps");
  spec.nvlink_latency_s = micros_or(reader, root, "nvlink_latency_us", spec.nvlink_latency_s);
  spec.nic_latency_s = micros_or(reader, root, "nic_latency_us", spec.nic_latency_s);
  spec.switch_latency_s = micros_or(reader, root, "switch_latency_us", spec.switch_latency_s);
  spec.rail_optimized = reader.flag(root, "", "rail_optimized", spec.rail_optimized);
  if (reader.has(root, "leaf_down_ports")) spec.leaf_down_ports = reader.integer(root, "", "leaf_down_ports", 1);
  if (reader.has(root, "oversubscription")) spec.oversubscription = reader.positive(root, "", "oversubscription");
  Parsed parsed{build_at(reader, root, [&] { return build_hierarchical(spec); }), YamlReader::line_of(root["nodes"])};
  // pxn (the default where there are rails) or ecmp; --routing overrides it.
  if (reader.has(root, "routing")) {
    try {
      set_routing(parsed.topology, reader.text(root, "", "routing"));
    } catch (const UserError& error) {
      std::string message = error.what();
      if (message.rfind("--", 0) == 0) message = message.substr(2);  // "--routing: ..." -> "routing: ..."
      reader.fail(root["routing"], message);
    }
  }
  return parsed;
}

Parsed parse_builder(const YamlReader& reader, const YAML::Node& root) {
  const std::string kind = reader.text(root, "", "builder");
  if (kind == "ring" || kind == "switch" || kind == "fully-connected") return parse_simple_builder(reader, root, kind);
  if (kind == "torus") return parse_torus(reader, root);
  if (kind == "hierarchical") return parse_hierarchical(reader, root);
  reader.fail(root["builder"],
              "unknown builder '" + kind + "' (expected ring, torus, fully-connected, switch or hierarchical)");
}

// ---------------------------------------------------------------------------------------------
// Form 3: an explicit graph. GPUs are gpu0 .. gpu{n-1}; switches are named.

struct ExplicitGraph {
  Topology topology;
  std::map<std::string, int32_t> vertices;
};

template <typename Enum>
Enum parse_choice(const YamlReader& reader, const YAML::Node& map, const std::string& path, const std::string& key,
                  const std::vector<std::pair<std::string, Enum>>& choices) {
  const std::string name = reader.text(map, path, key);
  std::string list;
  for (const auto& [text, value] : choices) {
    if (text == name) return value;
    list += (list.empty() ? "" : ", ") + text;
  }
  reader.fail(map[key],
              YamlReader::path_of(path, key) + ": unknown value '" + name + "' (expected one of: " + list + ")");
}

void add_switches(const YamlReader& reader, const YAML::Node& list, int32_t nodes, ExplicitGraph& graph) {
  if (!list.IsSequence()) reader.fail(list, "switches: expected a list of names or {name, node, kind}");
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node entry = list[i];
    const std::string path = "switches[" + std::to_string(i) + "]";
    VertexInfo info;
    info.kind = VertexKind::switch_;
    if (entry.IsMap()) {
      reader.check_keys(entry, {"name", "node", "kind"}, "in " + path);
      info.name = reader.text(entry, path, "name");
      if (reader.has(entry, "node")) info.node = reader.integer(entry, path, "node", 0);
      if (info.node >= nodes)
        reader.fail(entry["node"], path + ".node: " + std::to_string(info.node) + " is out of range (expected 0 to " +
                                       std::to_string(nodes - 1) + ")");
      if (reader.has(entry, "kind"))
        info.kind = parse_choice<VertexKind>(reader, entry, path, "kind",
                                             {{"switch", VertexKind::switch_},
                                              {"nvswitch", VertexKind::nvswitch},
                                              {"nic", VertexKind::nic},
                                              {"leaf", VertexKind::leaf},
                                              {"spine", VertexKind::spine}});
    } else {
      info.name = reader.text(entry, path);
    }
    if (graph.vertices.count(info.name))
      reader.fail(entry,
                  path + ": the name '" + info.name + "' is taken (expected a unique name; GPUs are gpu0, gpu1, ...)");
    graph.vertices[info.name] = graph.topology.add_vertex(info);
  }
}

enum class Duplex { full, half, simplex };

void add_link(const YamlReader& reader, const YAML::Node& entry, const std::string& path, ExplicitGraph& graph) {
  reader.require_map(entry, path);
  reader.check_keys(entry, {"from", "to", "bandwidth", "bandwidth_gbps", "latency_us", "duplex", "class"}, "in " + path);
  auto endpoint = [&](const std::string& key) {
    const std::string name = reader.text(entry, path, key);
    auto found = graph.vertices.find(name);
    if (found == graph.vertices.end())
      reader.fail(entry[key], path + "." + key + ": unknown GPU or switch '" + name + "' (expected gpu0 to gpu" +
                                  std::to_string(graph.topology.gpu_count() - 1) + " or a name listed under switches)");
    return found->second;
  };
  const int32_t from = endpoint("from"), to = endpoint("to");
  if (from == to) reader.fail(entry, path + ": a link from a vertex to itself (expected two different endpoints)");
  Topology& topology = graph.topology;
  LinkInfo link;
  link.bytes_per_s = bandwidth(reader, entry, path, "bandwidth", "bandwidth_gbps");
  link.latency_s = micros(reader, entry, path, "latency_us");
  // A link leaves a server when its ends are in different servers or one end is in none.
  link.inter_node = topology.vertex(from).node != topology.vertex(to).node;
  link.link_class = link.inter_node ? LinkClass::network : LinkClass::generic;
  if (reader.has(entry, "class"))
    link.link_class = parse_choice<LinkClass>(reader, entry, path, "class",
                                              {{"nvlink", LinkClass::nvlink},
                                               {"pcie", LinkClass::pcie},
                                               {"network", LinkClass::network},
                                               {"torus", LinkClass::torus},
                                               {"generic", LinkClass::generic}});
  const Duplex duplex =
      reader.has(entry, "duplex")
          ? parse_choice<Duplex>(reader, entry, path, "duplex",
                                 {{"full", Duplex::full}, {"half", Duplex::half}, {"simplex", Duplex::simplex}})
          : Duplex::full;
  auto new_resource = [&] {
    topology.resource_bytes_per_s.push_back(link.bytes_per_s);
    return static_cast<int32_t>(topology.resource_bytes_per_s.size() - 1);
  };
  auto add_edge = [&](int32_t u, int32_t v, int32_t resource) {
    LinkInfo info = link;
    info.resource = resource;
    topology.add_link(u, v, info);
  };
  // Full duplex: a capacity per direction; half duplex: both directions draw on one.
  const int32_t forward = new_resource();
  add_edge(from, to, forward);
  if (duplex != Duplex::simplex) add_edge(to, from, duplex == Duplex::half ? forward : new_resource());
}

Parsed parse_explicit(const YamlReader& reader, const YAML::Node& root) {
  reader.check_keys(root, {"name", "gpus", "gpus_per_node", "switches", "links"}, "next to 'links'");
  const int32_t gpus = reader.integer(root, "", "gpus", 1);
  int32_t gpus_per_node = 1;
  if (reader.has(root, "gpus_per_node")) {
    gpus_per_node = reader.integer(root, "", "gpus_per_node", 1);
    if (gpus % gpus_per_node != 0)
      reader.fail(root["gpus_per_node"], "gpus_per_node: " + std::to_string(gpus_per_node) + " does not divide gpus (" +
                                             std::to_string(gpus) + ")");
  }
  ExplicitGraph graph;
  Topology& topology = graph.topology;
  topology.shape = TopologyShape::custom;
  topology.gpus_per_node = gpus_per_node;
  for (int32_t gpu = 0; gpu < gpus; ++gpu) {
    VertexInfo info{VertexKind::gpu, "gpu" + std::to_string(gpu), gpu, gpu / gpus_per_node};
    graph.vertices[info.name] = topology.add_vertex(info);
  }
  if (reader.has(root, "switches"))
    add_switches(reader, reader.field(root, "", "switches"), gpus / gpus_per_node, graph);
  const YAML::Node links = reader.field(root, "", "links");
  if (!links.IsSequence())
    reader.fail(links, "links: expected a list of {from, to, bandwidth, latency_us, duplex}");
  for (size_t i = 0; i < links.size(); ++i) add_link(reader, links[i], "links[" + std::to_string(i) + "]", graph);
  try {
    check_connected(topology);
  } catch (const UserError& error) {
    reader.fail(links, std::string(error.what()) + " (expected links that connect every GPU to every other GPU)");
  }
  return {std::move(topology), YamlReader::line_of(root["gpus"])};
}

Parsed parse(const std::string& text, const std::string& source_name) {
  const YamlReader reader(source_name);
  // Read-only from here: operator[] on a const node never inserts the key it looks up.
  const YAML::Node root = [&] {
    try {
      return YAML::Load(text);
    } catch (const YAML::Exception& error) {
      reader.fail_at_line(error.mark.line < 0 ? 1 : error.mark.line + 1, "not valid YAML: " + error.msg);
    }
  }();
  const char* const forms = "one of the keys 'dimensions', 'builder' or 'links' (see topologies/examples/)";
  if (!root.IsMap()) reader.fail(root, std::string("expected a mapping with ") + forms);
  const int count = reader.has(root, "dimensions") + reader.has(root, "builder") + reader.has(root, "links");
  if (count == 0) reader.fail(root, std::string("expected ") + forms);
  if (count > 1) reader.fail(root, "'dimensions', 'builder' and 'links' exclude each other (expected exactly one)");
  Parsed parsed = reader.has(root, "dimensions") ? parse_dimensions(reader, root)
                  : reader.has(root, "builder")  ? parse_builder(reader, root)
                                                 : parse_explicit(reader, root);
  parsed.topology.name =
      reader.has(root, "name") ? reader.text(root, "", "name") : std::filesystem::path(source_name).stem().string();
  parsed.topology.source = source_name;
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Presets.

// "16" -> 16; anything else (empty, "8x", "-1") -> -1.
int32_t parse_size(const std::string& text) {
  if (text.empty() || text.size() > 7 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(text);
}

std::vector<int32_t> parse_dims(const std::string& text) {
  std::vector<int32_t> dims;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, 'x')) dims.push_back(parse_size(part));
  if (!text.empty() && text.back() == 'x') dims.push_back(-1);
  return dims;
}

HierarchicalSpec h100_ib_spec(int32_t nodes) {
  HierarchicalSpec spec;  // latencies and leaf radix: the builder's defaults
  spec.nodes = nodes;
  spec.gpus_per_node = 8;
  spec.nvlink_bytes_per_s = 450e9;  // NVLink4: 900 GB/s bidirectional per GPU
  spec.nics_per_node = 8;
  spec.nic_bytes_per_s = 50e9;  // ConnectX-7, 400 Gb/s
  spec.rail_optimized = true;
  spec.oversubscription = 1.0;
  return spec;
}

// nullopt: not a preset name (the caller then reports neither preset nor file).
std::optional<Topology> build_preset(const std::string& name, int32_t gpus) {
  auto sized = [&](const std::string& text, const std::string& example) {
    // "ring" alone takes the rank count; "ring-8" names its size.
    int32_t size = text.empty() ? gpus : parse_size(text);
    if (size <= 0)
      throw UserError("preset '" + name + "': " +
                      (text.empty() ? "needs a size (e.g. " + example + ") or a GPU count"
                                    : "'" + text + "' is not a GPU count (e.g. " + example + ")"));
    return size;
  };
  auto suffix = [&](const std::string& prefix) -> std::optional<std::string> {
    if (name == prefix) return std::string();
    if (name.rfind(prefix + "-", 0) == 0 || name.rfind(prefix + ":", 0) == 0) return name.substr(prefix.size() + 1);
    return std::nullopt;
  };
  if (auto rest = suffix("h100-ib")) {
    int32_t nodes = rest->empty() ? (gpus > 0 && gpus % 8 == 0 ? gpus / 8 : -1) : parse_size(*rest);
    if (nodes <= 0)
      throw UserError("preset '" + name +
                      "': expected h100-ib:N with N servers of 8 GPUs (or a GPU count that is a multiple of 8)");
    return build_hierarchical(h100_ib_spec(nodes));
  }
  if (name == "a100-16x4") {
    HierarchicalSpec spec;
    spec.nodes = 16;
    spec.gpus_per_node = 4;
    spec.nvlink_bytes_per_s = 300e9;  // NVLink3: 12 links x 25 GB/s per direction
    spec.nics_per_node = 4;           // assumed: 4 x 200 Gb/s HDR InfiniBand
    spec.nic_bytes_per_s = 25e9;
    return build_hierarchical(spec);
  }
  if (name == "h100-64x1") {
    HierarchicalSpec spec;
    spec.nodes = 64;
    spec.gpus_per_node = 1;
    spec.nics_per_node = 1;  // assumed: one 400 Gb/s NIC per server
    spec.nic_bytes_per_s = 50e9;
    return build_hierarchical(spec);
  }
  if (name == "tpu-v4-like") {
    // Assumed, not measured: ~50 GB/s per ICI link direction; 1 us per hop as in the TPU
    // validation setups of ASTRA-sim (research/simulators.md 2.1).
    constexpr double kIciBytesPerS = 50e9, kIciLatencyS = 1e-6;
    return build_torus({4, 4, 4}, kIciBytesPerS, kIciLatencyS);
  }
  if (auto rest = suffix("ring")) return build_ring(sized(*rest, "ring-8"), kGenericBytesPerS, kGenericLatencyS, true);
  if (auto rest = suffix("switch"))
    return build_switch(sized(*rest, "switch-8"), kGenericBytesPerS, kGenericLatencyS / 2);
  if (auto rest = suffix("full"))
    return build_fully_connected(sized(*rest, "full-8"), kGenericBytesPerS, kGenericLatencyS);
  if (auto rest = suffix("torus")) {
    std::vector<int32_t> dims = parse_dims(*rest);
    if (dims.empty() || std::any_of(dims.begin(), dims.end(), [](int32_t k) { return k <= 0; }))
      throw UserError("preset '" + name + "': expected torus-AxB or torus-AxBxC (e.g. torus-4x4)");
    return build_torus(dims, kGenericBytesPerS, kGenericLatencyS);
  }
  return std::nullopt;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot be read");
  // The parsed YAML tree takes ~100 bytes per byte of text (a node per short scalar), and an
  // explicit graph's links are as many as its lines: refuse a file whose tree would not fit.
  std::error_code size_error;
  const auto file_bytes = std::filesystem::file_size(path, size_error);
  if (!size_error) require_memory(100.0 * static_cast<double>(file_bytes), path + " (a topology file of " +
                                                                             format_bytes(static_cast<double>(file_bytes)) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string format_gbps(double bytes_per_s) {
  std::ostringstream text;
  text << bytes_per_s / kBytesPerGB << " GB/s";
  return text.str();
}

std::string quoted(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<PresetInfo> list_presets() {
  return {
      {"h100-ib:N",
       "N servers x 8 H100 on NVSwitch (900 GB/s bidirectional NVLink4 = 450 GB/s per direction), 8 x 400 Gb/s "
       "rail-optimised InfiniBand, non-blocking leaf-spine (DGX H100 datasheet figures)"},
      {"a100-16x4",
       "ATTENTION2D cluster 1 (16 servers x 4 A100): NVLink3 300 GB/s per direction per GPU; assumed 4 x 200 Gb/s "
       "HDR NICs per server, non-blocking (the paper gives no network figures)"},
      {"h100-64x1",
       "ATTENTION2D cluster 2 (64 servers x 1 H100): assumed one 400 Gb/s NIC per server, non-blocking (the paper "
       "gives no NIC figure)"},
      {"tpu-v4-like",
       "TPU v4-like 4x4x4 3-D torus with wrap-around; assumed ~50 GB/s per ICI link direction and 1 us per hop (not "
       "measured figures)"},
      {"ring-N",
       "N GPUs on a bidirectional ring, 50 GB/s per direction, 5 us per hop (the analytical model's default link)"},
      {"torus-AxB", "A x B (or AxBxC) torus with wrap-around, 50 GB/s per link direction, 5 us per hop"},
      {"switch-N", "N GPUs on one non-blocking switch, 50 GB/s per port, 2.5 us per hop (5 us GPU to GPU)"},
      {"full-N", "a dedicated 50 GB/s, 5 us link per GPU pair: the uniform network used without --topology"},
  };
}

Topology parse_topology_yaml(const std::string& text, const std::string& source_name) {
  return parse(text, source_name).topology;
}

Topology load_topology(const std::string& preset_or_file, int32_t gpus) {
  // A file that exists wins over a preset of the same name.
  std::error_code ignored;
  if (std::filesystem::is_regular_file(preset_or_file, ignored)) {
    Parsed parsed = parse(read_file(preset_or_file), preset_or_file);
    if (gpus > 0 && parsed.topology.gpu_count() != gpus)
      YamlReader(preset_or_file)
          .fail_at_line(parsed.line_of_size, "the topology has " + std::to_string(parsed.topology.gpu_count()) +
                                                 " GPUs but the schedule has " + std::to_string(gpus) +
                                                 " ranks (expected " + std::to_string(gpus) + " GPUs)");
    return std::move(parsed.topology);
  }
  std::optional<Topology> preset = build_preset(preset_or_file, gpus);
  if (!preset)
    throw UserError("'" + preset_or_file + "' is neither a preset (see tessera topo list) nor a readable file");
  // Presets that name their size must match the schedule too, as files must.
  if (gpus > 0 && preset->gpu_count() != gpus)
    throw UserError("preset '" + preset_or_file + "' has " + std::to_string(preset->gpu_count()) +
                    " GPUs but the schedule has " + std::to_string(gpus) + " ranks");
  preset->name = preset_or_file;
  preset->source = preset_or_file;
  return std::move(*preset);
}

std::optional<int32_t> named_gpu_count(const std::string& preset_or_file) {
  std::error_code ignored;
  const bool file = std::filesystem::is_regular_file(preset_or_file, ignored);
  // The presets that take their size from the schedule (build_preset's `sized` and h100-ib).
  for (const char* unsized : {"ring", "switch", "full", "h100-ib"})
    if (!file && preset_or_file == unsized) return std::nullopt;
  return load_topology(preset_or_file, 0).gpu_count();
}

std::string to_dot(const Topology& topology) {
  std::ostringstream dot;
  dot << "digraph " << quoted(topology.name) << " {\n";
  dot << "  node [fontname=\"Helvetica\"];\n";
  // Servers become clusters when there is more than one GPU per server.
  std::map<int32_t, std::vector<int32_t>> by_node;
  std::vector<int32_t> outside;
  for (int32_t v = 0; v < topology.vertex_count(); ++v) {
    if (topology.gpus_per_node > 1 && topology.vertex(v).node >= 0) {
      by_node[topology.vertex(v).node].push_back(v);
    } else {
      outside.push_back(v);
    }
  }
  auto vertex_line = [&](int32_t v, const char* indent) {
    const VertexInfo& info = topology.vertex(v);
    dot << indent << quoted(info.name) << " [shape=" << (info.kind == VertexKind::gpu ? "box" : "ellipse") << "];\n";
  };
  for (const auto& [node, vertices] : by_node) {
    dot << "  subgraph cluster_node" << node << " {\n    label=\"node " << node << "\";\n";
    for (int32_t v : vertices) vertex_line(v, "    ");
    dot << "  }\n";
  }
  for (int32_t v : outside) vertex_line(v, "  ");
  // A pair of opposite links of equal bandwidth is drawn once, with arrows both ways.
  std::set<std::pair<int32_t, int32_t>> drawn;
  for (int32_t l = 0; l < topology.link_count(); ++l) {
    const int32_t u = topology.link_source(l), v = topology.link_target(l);
    if (drawn.count({u, v})) continue;
    const LinkInfo& link = topology.link(l);
    bool both = false, shared = false;
    for (int32_t back : topology.out_links(v)) {
      if (topology.link_target(back) != u || topology.link(back).bytes_per_s != link.bytes_per_s) continue;
      both = true;
      shared = topology.link(back).resource == link.resource;
    }
    drawn.insert({u, v});
    if (both) drawn.insert({v, u});
    const std::string label = format_gbps(link.bytes_per_s) + (shared ? " half duplex" : "");
    dot << "  " << quoted(topology.vertex(u).name) << " -> " << quoted(topology.vertex(v).name)
        << " [label=" << quoted(label) << (both ? ", dir=both" : "") << "];\n";
  }
  dot << "}\n";
  return dot.str();
}

}  // namespace tessera::topo
