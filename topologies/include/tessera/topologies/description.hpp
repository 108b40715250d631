#pragma once
// Topology description files (YAML, comments allowed) and built-in presets.
//
//   # A shorthand: one entry per dimension, dimension 0 fastest
//   name: two-level
//   dimensions:
//     - {kind: switch, size: 8, bandwidth: 450GB/s, latency_us: 1}
//     - {kind: ring, size: 4, bandwidth: 400Gb/s, latency_us: 5}
//
//   # Or a builder with its parameters: ring, torus, fully-connected, switch, hierarchical
//   builder: hierarchical
//   nodes: 4
//   gpus_per_node: 8 ...
//   routing: ecmp          # optional: pxn (the default on rail-optimised clusters) or ecmp
//
//   # Or an explicit graph
//   gpus: 4
//   switches: [sw0]
//   links:
//     - {from: gpu0, to: sw0, bandwidth: 800Gb/s, latency_us: 1, duplex: full}
//
// Bandwidths carry their unit, bytes or bits (50GB/s = 400Gb/s; core/units.hpp); the deprecated
// *_gbps keys take a number of GB/s. Latencies are microseconds. Every error names the file,
// the line and what was expected.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

struct PresetInfo {
  std::string name;     // e.g. "h100-ib:4" (the part after ':' is a parameter)
  std::string summary;  // what it is and where its numbers come from
};
std::vector<PresetInfo> list_presets();

// A preset name ("ring-8", "torus-4x4", "h100-ib:16" ...) or a file path. `gpus` > 0 sizes
// presets that take a GPU count; files must match it when given (UserError otherwise).
Topology load_topology(const std::string& preset_or_file, int32_t gpus = 0);
// The GPU count a file or a sized preset names (ring-1024, h100-ib:8 -> 64); nullopt for a
// preset sized by the rank count (ring, switch, full, h100-ib). UserError as load_topology.
std::optional<int32_t> named_gpu_count(const std::string& preset_or_file);
Topology parse_topology_yaml(const std::string& text, const std::string& source_name);

// Graphviz (dot) text of the network.
std::string to_dot(const Topology& topology);

}  // namespace tessera::topo
