// Builders for the cluster networks of builders.hpp. Every builder adds the GPUs first (GPU i
// is vertex i), then switches, then cables. A cable is full duplex: two directed links with the
// full bandwidth each and one resource each.
#include "tessera/topologies/builders.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>

#include "tessera/core/error.hpp"
#include "tessera/core/resource_limits.hpp"

namespace tessera::topo {

namespace {

// Beyond these a network is a typo, not a cluster (and would need gigabytes).
constexpr int64_t kMaxGpus = int64_t{1} << 22;
// 2^24 directed links (about 4 GB with routing and metrics over them): a fully connected network
// of 4,096 GPUs, or a 3-D torus of 2.8M. Past it `topo show` would take most of a workstation's
// memory and minutes of max-flow for a network no cluster builds.
constexpr int64_t kMaxLinks = int64_t{1} << 24;

std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void require_gpus(int64_t gpus, const std::string& what) {
  if (gpus < 1) throw UserError(what + ": gpus must be at least 1 (got " + std::to_string(gpus) + ")");
  if (gpus > kMaxGpus) {
    throw UserError(what + ": " + std::to_string(gpus) + " GPUs is more than the " + std::to_string(kMaxGpus) +
                    " supported");
  }
}

void require_links(int64_t links, const std::string& what) {
  if (links > kMaxLinks) {
    throw UserError(what + ": " + std::to_string(links) + " directed links is more than the " +
                    std::to_string(kMaxLinks) + " supported (2^24)");
  }
}

// Before a vertex or link is added: the network and what is built over it (routing's adjacency,
// the metrics' max-flow graph) must fit in memory (estimate_topology_bytes).
void require_topology_memory(double vertices, double links, const std::string& what) {
  require_memory(estimate_topology_bytes(vertices, links),
                 what + " network of " + format_number(vertices) + " vertices and " + format_number(links) + " links");
}

// `label` is what the user set, e.g. "NVLink bandwidth".
void require_bandwidth(double bytes_per_s, const std::string& what, const std::string& label = "bandwidth") {
  if (!(bytes_per_s > 0) || !std::isfinite(bytes_per_s)) {
    throw UserError(what + ": " + label + " must be positive (got " + format_number(bytes_per_s) + " B/s)");
  }
}

void require_latency(double latency_s, const std::string& what, const std::string& label = "latency") {
  if (!(latency_s >= 0) || !std::isfinite(latency_s)) {
    throw UserError(what + ": " + label + " must be >= 0 (got " + format_number(latency_s) + " s)");
  }
}

struct CableSpec {
  double bytes_per_s = 0;
  double latency_s = 0;
  LinkClass link_class = LinkClass::generic;
};

int32_t add_gpu(Topology& topology, int32_t gpu, int32_t node) {
  return topology.add_vertex(VertexInfo{VertexKind::gpu, "gpu" + std::to_string(gpu), gpu, node});
}

int32_t add_switch(Topology& topology, VertexKind kind, std::string name, int32_t node = -1) {
  return topology.add_vertex(VertexInfo{kind, std::move(name), -1, node});
}

// An edge leaves or enters a server when its ends sit in different servers, or when it touches
// the network side (NICs, leaves, spines).
bool crosses_servers(const VertexInfo& from, const VertexInfo& to) {
  auto network_side = [](VertexKind kind) {
    return kind == VertexKind::nic || kind == VertexKind::leaf || kind == VertexKind::spine;
  };
  return network_side(from.kind) || network_side(to.kind) || from.node != to.node;
}

void add_link(Topology& topology, int32_t from, int32_t to, const CableSpec& spec) {
  LinkInfo link;
  link.bytes_per_s = spec.bytes_per_s;
  link.latency_s = spec.latency_s;
  link.link_class = spec.link_class;
  link.resource = static_cast<int32_t>(topology.resource_bytes_per_s.size());
  link.inter_node = crosses_servers(topology.vertex(from), topology.vertex(to));
  topology.resource_bytes_per_s.push_back(spec.bytes_per_s);
  topology.add_link(from, to, link);
}

void add_cable(Topology& topology, int32_t a, int32_t b, const CableSpec& spec) {
  add_link(topology, a, b, spec);
  add_link(topology, b, a, spec);
}

// Links member j of a ring of `members` to member j + 1 (wrapping). A ring of two has a single
// cable: its "forward" and "backward" neighbours are the same GPU.
void add_ring_cables(Topology& topology, const std::vector<int32_t>& members, const CableSpec& spec) {
  const size_t k = members.size();
  if (k < 2) return;
  const size_t cables = k == 2 ? 1 : k;
  for (size_t j = 0; j < cables; ++j) add_cable(topology, members[j], members[(j + 1) % k], spec);
}

// Every GPU's vertex, in GPU order.
std::vector<int32_t> all_gpu_vertices(const Topology& topology) {
  std::vector<int32_t> vertices;
  for (int32_t gpu = 0; gpu < topology.gpu_count(); ++gpu) vertices.push_back(topology.gpu_vertex(gpu));
  return vertices;
}

int64_t ring_cables(int64_t k) { return k < 2 ? 0 : (k == 2 ? 1 : k); }

// The lines of a dimension: groups of the k GPUs that differ only in that coordinate (stride =
// product of the sizes below it), in the order of their first GPU, each in coordinate order.
std::vector<std::vector<int32_t>> lines_along(const Topology& topology, int64_t stride, int64_t k) {
  std::vector<std::vector<int32_t>> lines;
  const int64_t gpus = topology.gpu_count();
  for (int64_t start = 0; start < gpus; ++start) {
    if ((start / stride) % k != 0) continue;
    std::vector<int32_t>& line = lines.emplace_back();
    for (int64_t j = 0; j < k; ++j) line.push_back(topology.gpu_vertex(static_cast<int32_t>(start + j * stride)));
  }
  return lines;
}

}  // namespace

//   gpu0 -> gpu1 -> ... -> gpu(n-1)
//     ^________________________|       bidirectional: every arrow also points back
Topology build_ring(int32_t gpus, double bytes_per_s, double latency_s, bool bidirectional) {
  const std::string what = bidirectional ? "ring" : "unidirectional ring";
  require_gpus(gpus, what);
  require_bandwidth(bytes_per_s, what);
  require_latency(latency_s, what);
  require_topology_memory(gpus, 2.0 * gpus, what);
  Topology topology;
  topology.name = std::string(bidirectional ? "ring-" : "uniring-") + std::to_string(gpus);
  topology.shape = TopologyShape::ring;
  topology.bidirectional_ring = bidirectional;
  for (int32_t gpu = 0; gpu < gpus; ++gpu) add_gpu(topology, gpu, gpu);
  const CableSpec spec{bytes_per_s, latency_s, LinkClass::generic};
  if (bidirectional) {
    add_ring_cables(topology, all_gpu_vertices(topology), spec);
  } else if (gpus > 1) {
    for (int32_t gpu = 0; gpu < gpus; ++gpu) {
      add_link(topology, topology.gpu_vertex(gpu), topology.gpu_vertex((gpu + 1) % gpus), spec);
    }
  }
  check_connected(topology);
  return topology;
}

//   2-D example, 3 x 3 (dimension 0 across):   g0 - g1 - g2 -(wrap to g0)
//                                               |    |    |
//                                              g3 - g4 - g5
//                                               |    |    |   (column wraps to row 0)
//                                              g6 - g7 - g8
// Each GPU is cabled to its +1 neighbour in every dimension (wrapping); a dimension of size 2
// has one cable per pair, and one of size 1 none.
Topology build_torus(const std::vector<int32_t>& dims, double bytes_per_s, double latency_s) {
  if (dims.empty()) throw UserError("torus: needs at least one dimension");
  int64_t gpus = 1, cables = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 1) {
      throw UserError("torus dimension " + std::to_string(d) + " has size " + std::to_string(dims[d]) +
                      "; sizes must be at least 1");
    }
    gpus *= dims[d];
    require_gpus(gpus, "torus");
  }
  for (int32_t k : dims) cables += ring_cables(k) * (gpus / k);
  require_links(2 * cables, "torus");
  require_topology_memory(static_cast<double>(gpus), 2.0 * static_cast<double>(cables), "torus");
  require_bandwidth(bytes_per_s, "torus");
  require_latency(latency_s, "torus");

  Topology topology;
  topology.name = "torus-";
  for (size_t d = 0; d < dims.size(); ++d) topology.name += (d ? "x" : "") + std::to_string(dims[d]);
  topology.shape = TopologyShape::torus;
  topology.torus_dims = dims;
  for (int32_t gpu = 0; gpu < static_cast<int32_t>(gpus); ++gpu) add_gpu(topology, gpu, gpu);
  const CableSpec spec{bytes_per_s, latency_s, LinkClass::torus};
  int64_t stride = 1;
  for (int32_t k : dims) {
    for (const std::vector<int32_t>& ring : lines_along(topology, stride, k)) add_ring_cables(topology, ring, spec);
    stride *= k;
  }
  check_connected(topology);
  return topology;
}

// Every ordered pair of GPUs has its own link (the per-link bandwidth is the per-peer share).
Topology build_fully_connected(int32_t gpus, double bytes_per_s, double latency_s) {
  require_gpus(gpus, "fully connected");
  require_links(int64_t{gpus} * (gpus - 1), "fully connected");
  require_bandwidth(bytes_per_s, "fully connected");
  require_latency(latency_s, "fully connected");
  require_topology_memory(gpus, static_cast<double>(gpus) * (gpus - 1), "fully connected");
  Topology topology;
  topology.name = "fully-connected-" + std::to_string(gpus);
  topology.shape = TopologyShape::fully_connected;
  for (int32_t gpu = 0; gpu < gpus; ++gpu) add_gpu(topology, gpu, gpu);
  const CableSpec spec{bytes_per_s, latency_s, LinkClass::generic};
  for (int32_t a = 0; a < gpus; ++a) {
    for (int32_t b = a + 1; b < gpus; ++b) {
      add_cable(topology, topology.gpu_vertex(a), topology.gpu_vertex(b), spec);
    }
  }
  check_connected(topology);
  return topology;
}

//        switch
//      /  |   \          one cable per GPU; the switch itself never blocks
//   gpu0 gpu1 ... gpu(n-1)
Topology build_switch(int32_t gpus, double bytes_per_s, double latency_s) {
  require_gpus(gpus, "switch");
  require_bandwidth(bytes_per_s, "switch");
  require_latency(latency_s, "switch");
  require_topology_memory(gpus + 1.0, 2.0 * gpus, "switch");
  Topology topology;
  topology.name = "switch-" + std::to_string(gpus);
  topology.shape = TopologyShape::single_switch;
  for (int32_t gpu = 0; gpu < gpus; ++gpu) add_gpu(topology, gpu, gpu);
  int32_t hub = add_switch(topology, VertexKind::switch_, "switch");
  const CableSpec spec{bytes_per_s, latency_s, LinkClass::generic};
  for (int32_t gpu = 0; gpu < gpus; ++gpu) add_cable(topology, topology.gpu_vertex(gpu), hub, spec);
  check_connected(topology);
  return topology;
}

namespace {

void validate(const HierarchicalSpec& spec) {
  const std::string what = "hierarchical";
  auto at_least_one = [&](int32_t value, const char* field) {
    if (value < 1) throw UserError(what + ": " + field + " must be at least 1 (got " + std::to_string(value) + ")");
  };
  at_least_one(spec.nodes, "nodes");
  at_least_one(spec.gpus_per_node, "gpus_per_node");
  at_least_one(spec.nics_per_node, "nics_per_node");
  at_least_one(spec.leaf_down_ports, "leaf_down_ports");
  require_gpus(int64_t{spec.nodes} * spec.gpus_per_node, what);
  require_bandwidth(spec.nvlink_bytes_per_s, what, "NVLink bandwidth");
  require_bandwidth(spec.nic_bytes_per_s, what, "NIC bandwidth");
  require_latency(spec.nvlink_latency_s, what, "NVLink latency");
  require_latency(spec.nic_latency_s, what, "NIC latency");
  require_latency(spec.switch_latency_s, what, "switch latency");
  if (!(spec.oversubscription >= 1) || !std::isfinite(spec.oversubscription)) {
    throw UserError(what + ": oversubscription must be >= 1 (got " + format_number(spec.oversubscription) + ")");
  }
  if (!spec.rail_optimized && spec.leaf_down_ports < spec.nics_per_node) {
    throw UserError(what + ": leaf_down_ports (" + std::to_string(spec.leaf_down_ports) +
                    ") must be at least nics_per_node (" + std::to_string(spec.nics_per_node) +
                    ") when not rail-optimised: all NICs of a server share one leaf");
  }
}

// Where the NICs of the servers plug into the leaves, and how wide the leaves' uplinks are.
struct LeafPlan {
  int32_t leaves = 0;
  int32_t ports_per_leaf = 0;  // NIC ports of a full leaf
  int32_t spines = 0;
  double uplink_bytes_per_s = 0;  // each leaf-spine cable
  int32_t leaf_of(const HierarchicalSpec& spec, int32_t node, int32_t nic) const {
    if (spec.rail_optimized) return (node / spec.leaf_down_ports) * spec.nics_per_node + nic;
    return node / (ports_per_leaf / spec.nics_per_node);
  }
};

LeafPlan plan_leaves(const HierarchicalSpec& spec) {
  LeafPlan plan;
  if (spec.nodes == 1) return plan;  // nothing leaves the server
  if (spec.rail_optimized) {
    // A group of leaf_down_ports servers has one leaf per rail.
    plan.ports_per_leaf = spec.leaf_down_ports;
    plan.leaves = (spec.nodes + spec.leaf_down_ports - 1) / spec.leaf_down_ports * spec.nics_per_node;
  } else {
    const int32_t servers_per_leaf = spec.leaf_down_ports / spec.nics_per_node;
    plan.ports_per_leaf = servers_per_leaf * spec.nics_per_node;
    plan.leaves = (spec.nodes + servers_per_leaf - 1) / servers_per_leaf;
  }
  if (plan.leaves > 1) {
    // Up-bandwidth = down-bandwidth / oversubscription, spread over one cable to each spine;
    // at oversubscription 1 that is one spine per down port, each cable as wide as a NIC.
    const double up_bytes_per_s = plan.ports_per_leaf * spec.nic_bytes_per_s / spec.oversubscription;
    plan.spines = std::max(1, static_cast<int32_t>(std::ceil(plan.ports_per_leaf / spec.oversubscription - 1e-9)));
    plan.uplink_bytes_per_s = up_bytes_per_s / plan.spines;
  }
  return plan;
}

}  // namespace

//   spine0 ... spine(S-1)                      every leaf has one cable to every spine
//     |  \      /   |                          (none when a single leaf holds every NIC)
//   leaf0  leaf1 ... leaf(L-1)                 rail-optimised: leaf r of a group of
//     |      |                                 leaf_down_ports servers takes NIC r of each
//   nic0 .. nic(m-1)      per server           not: all NICs of a server on one leaf
//     |      |
//   gpu0 .. gpu(g-1)  --  nvswitch             GPU i uses NIC i*m/g (m < g), NIC r serves
//                                              GPU r*g/m (m >= g); no NICs with one server
Topology build_hierarchical(const HierarchicalSpec& spec) {
  validate(spec);
  const LeafPlan plan = plan_leaves(spec);
  const int32_t g = spec.gpus_per_node, m = spec.nics_per_node, nodes = spec.nodes;
  const bool has_network = nodes > 1;
  int64_t cables = int64_t{nodes} * (g > 1 ? g : 0);
  if (has_network) cables += int64_t{nodes} * (std::max(g, m) + m) + int64_t{plan.leaves} * plan.spines;
  require_links(2 * cables, "hierarchical");
  const double vertices = static_cast<double>(nodes) * (g + (g > 1 ? 1 : 0) + (has_network ? m : 0)) +
                          static_cast<double>(plan.leaves) + plan.spines;
  require_topology_memory(vertices, 2.0 * static_cast<double>(cables), "hierarchical");

  Topology topology;
  topology.name = "hierarchical-" + std::to_string(nodes) + "x" + std::to_string(g);
  topology.shape = TopologyShape::hierarchical;
  topology.gpus_per_node = g;
  // Rails exist only where servers talk through the network; NCCL uses PXN on them.
  topology.rail_optimized = spec.rail_optimized && has_network;
  topology.routing = topology.rail_optimized ? RoutingPolicy::pxn : RoutingPolicy::ecmp;
  for (int32_t gpu = 0; gpu < nodes * g; ++gpu) add_gpu(topology, gpu, gpu / g);

  // Latency: each NVLink hop costs its own; a NIC costs its latency on the PCIe hop between it
  // and its GPU (once at each end); a leaf or spine costs its latency on the link into it, so a
  // route pays once per switch it crosses. The PCIe hop is as wide as the NIC, which stays the
  // narrowest part.
  const CableSpec nvlink{spec.nvlink_bytes_per_s, spec.nvlink_latency_s, LinkClass::nvlink};
  const CableSpec pcie{spec.nic_bytes_per_s, spec.nic_latency_s, LinkClass::pcie};
  const CableSpec into_leaf{spec.nic_bytes_per_s, spec.switch_latency_s, LinkClass::network};
  const CableSpec out_of_leaf{spec.nic_bytes_per_s, 0, LinkClass::network};
  const CableSpec leaf_to_spine{plan.uplink_bytes_per_s, spec.switch_latency_s, LinkClass::network};

  std::vector<int32_t> leaves, spines;
  for (int32_t leaf = 0; leaf < plan.leaves; ++leaf) {
    leaves.push_back(add_switch(topology, VertexKind::leaf, "leaf" + std::to_string(leaf)));
  }
  for (int32_t spine = 0; spine < plan.spines; ++spine) {
    spines.push_back(add_switch(topology, VertexKind::spine, "spine" + std::to_string(spine)));
  }
  for (int32_t node = 0; node < nodes; ++node) {
    auto gpu_vertex = [&](int32_t local) { return topology.gpu_vertex(node * g + local); };
    const std::string prefix = "node" + std::to_string(node) + ".";
    if (g > 1) {
      int32_t nvswitch = add_switch(topology, VertexKind::nvswitch, prefix + "nvswitch", node);
      for (int32_t local = 0; local < g; ++local) add_cable(topology, gpu_vertex(local), nvswitch, nvlink);
    }
    if (!has_network) continue;
    std::vector<int32_t> nics;
    for (int32_t nic = 0; nic < m; ++nic) {
      nics.push_back(add_switch(topology, VertexKind::nic, prefix + "nic" + std::to_string(nic), node));
    }
    if (m < g) {
      for (int32_t local = 0; local < g; ++local) {
        add_cable(topology, gpu_vertex(local), nics[static_cast<size_t>(local * m / g)], pcie);
      }
    } else {
      for (int32_t nic = 0; nic < m; ++nic) {
        add_cable(topology, gpu_vertex(nic * g / m), nics[static_cast<size_t>(nic)], pcie);
      }
    }
    for (int32_t nic = 0; nic < m; ++nic) {
      const int32_t leaf = leaves[static_cast<size_t>(plan.leaf_of(spec, node, nic))];
      add_link(topology, nics[static_cast<size_t>(nic)], leaf, into_leaf);
      add_link(topology, leaf, nics[static_cast<size_t>(nic)], out_of_leaf);
    }
  }
  for (int32_t leaf : leaves) {
    for (int32_t spine : spines) add_cable(topology, leaf, spine, leaf_to_spine);
  }
  check_connected(topology);
  return topology;
}

namespace {

const char* kind_name(DimensionKind kind) {
  switch (kind) {
    case DimensionKind::ring: return "ring";
    case DimensionKind::switch_: return "switch";
    case DimensionKind::fully_connected: return "fully-connected";
  }
  return "unknown";
}

int64_t dimension_cables(const DimensionSpec& dimension, int64_t gpus) {
  const int64_t k = dimension.size, groups = gpus / k;
  if (k < 2) return 0;
  switch (dimension.kind) {
    case DimensionKind::ring: return groups * ring_cables(k);
    case DimensionKind::switch_: return gpus;
    case DimensionKind::fully_connected: return groups * k * (k - 1) / 2;
  }
  return 0;
}

}  // namespace

// A product network: GPU index = sum of coordinate_d * (size_0 * ... * size_(d-1)). Along each
// dimension every group of GPUs that differ only in that coordinate is a ring (its own cables),
// hangs off its own switch, or is fully connected. With two or more dimensions and a switch or
// fully connected dimension 0, dimension 0 is the server (the scale-up domain); otherwise every
// GPU is its own server.
Topology build_from_dimensions(const std::vector<DimensionSpec>& dimensions) {
  if (dimensions.empty()) throw UserError("dimensions: needs at least one dimension");
  int64_t gpus = 1;
  for (size_t d = 0; d < dimensions.size(); ++d) {
    const DimensionSpec& dimension = dimensions[d];
    const std::string what = "dimension " + std::to_string(d) + " (" + kind_name(dimension.kind) + ")";
    if (dimension.size < 1) {
      throw UserError(what + " has size " + std::to_string(dimension.size) + "; sizes must be at least 1");
    }
    require_bandwidth(dimension.bytes_per_s, what);
    require_latency(dimension.latency_s, what);
    gpus *= dimension.size;
    require_gpus(gpus, "dimensions");
  }
  int64_t cables = 0;
  for (const DimensionSpec& dimension : dimensions) cables += dimension_cables(dimension, gpus);
  require_links(2 * cables, "dimensions");
  double hubs = 0;  // one switch per line of a switch dimension
  for (const DimensionSpec& dimension : dimensions)
    if (dimension.kind == DimensionKind::switch_ && dimension.size > 1) hubs += static_cast<double>(gpus / dimension.size);
  require_topology_memory(static_cast<double>(gpus) + hubs, 2.0 * static_cast<double>(cables), "dimensions");

  Topology topology;
  bool all_rings = true;
  for (size_t d = 0; d < dimensions.size(); ++d) {
    topology.name += (d ? "-" : "") + std::string(kind_name(dimensions[d].kind)) + std::to_string(dimensions[d].size);
    all_rings = all_rings && dimensions[d].kind == DimensionKind::ring;
  }
  const bool server_dimension = dimensions.size() > 1 && dimensions[0].kind != DimensionKind::ring;
  topology.gpus_per_node = server_dimension ? dimensions[0].size : 1;
  if (all_rings) {
    topology.shape = TopologyShape::torus;  // dimension-ordered routing
    for (const DimensionSpec& dimension : dimensions) topology.torus_dims.push_back(dimension.size);
  } else if (dimensions.size() == 1) {
    topology.shape =
        dimensions[0].kind == DimensionKind::switch_ ? TopologyShape::single_switch : TopologyShape::fully_connected;
  } else {
    topology.shape = TopologyShape::custom;  // shortest paths with ECMP
  }
  for (int32_t gpu = 0; gpu < static_cast<int32_t>(gpus); ++gpu) add_gpu(topology, gpu, gpu / topology.gpus_per_node);

  int64_t stride = 1;
  for (size_t d = 0; d < dimensions.size(); ++d) {
    const DimensionSpec& dimension = dimensions[d];
    const int64_t k = dimension.size;
    const CableSpec spec{dimension.bytes_per_s, dimension.latency_s, LinkClass::generic};
    int32_t group = 0;
    for (const std::vector<int32_t>& members : lines_along(topology, stride, k)) {
      if (k < 2) break;  // a dimension of size 1 links nothing
      switch (dimension.kind) {
        case DimensionKind::ring: add_ring_cables(topology, members, spec); break;
        case DimensionKind::switch_: {
          const int32_t node = d == 0 && server_dimension ? group : -1;
          int32_t hub = add_switch(topology, VertexKind::switch_,
                                    "dim" + std::to_string(d) + ".switch" + std::to_string(group), node);
          for (int32_t member : members) add_cable(topology, member, hub, spec);
          break;
        }
        case DimensionKind::fully_connected:
          for (size_t a = 0; a < members.size(); ++a) {
            for (size_t b = a + 1; b < members.size(); ++b) add_cable(topology, members[a], members[b], spec);
          }
          break;
      }
      ++group;
    }
    stride *= k;
  }
  check_connected(topology);
  return topology;
}

// Per vertex: its info and name, its in and out lists (each a vector) and their adjacency
// copies, ~600 B; per link: the link, its resource, its places in those lists and two max-flow
// arcs, ~250 B (measured peaks: `topo check full-1000`, 1M links, 217 MB; `topo show` of a
// 4M-GPU ring, 4.1 GB).
double estimate_topology_bytes(double vertices, double links) { return 600 * vertices + 250 * links; }

// Every GPU reaches GPU 0 and GPU 0 reaches every GPU, so every GPU reaches every other.
void check_connected(const Topology& topology) {
  const std::string what = topology.name.empty() ? "topology" : "topology '" + topology.name + "'";
  if (topology.gpu_count() == 0) throw UserError(what + " has no GPUs");
  auto reached_from_gpu0 = [&](bool forward) {
    std::vector<char> reached(static_cast<size_t>(topology.vertex_count()), 0);
    std::queue<int32_t> frontier;
    frontier.push(topology.gpu_vertex(0));
    reached[static_cast<size_t>(topology.gpu_vertex(0))] = 1;
    while (!frontier.empty()) {
      const int32_t u = frontier.front();
      frontier.pop();
      for (int32_t link : forward ? topology.out_links(u) : topology.in_links(u)) {
        const int32_t v = forward ? topology.link_target(link) : topology.link_source(link);
        if (reached[static_cast<size_t>(v)]) continue;
        reached[static_cast<size_t>(v)] = 1;
        frontier.push(v);
      }
    }
    return reached;
  };
  for (bool forward : {true, false}) {
    std::vector<char> reached = reached_from_gpu0(forward);
    for (int32_t gpu = 1; gpu < topology.gpu_count(); ++gpu) {
      if (reached[static_cast<size_t>(topology.gpu_vertex(gpu))]) continue;
      throw UserError(what + " is not connected: " +
                      (forward ? "GPU 0 cannot reach GPU " + std::to_string(gpu)
                               : "GPU " + std::to_string(gpu) + " cannot reach GPU 0"));
    }
  }
}

}  // namespace tessera::topo
