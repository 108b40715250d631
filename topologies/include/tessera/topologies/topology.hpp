#pragma once
// A cluster network as a directed graph: GPUs and switches are vertices, every link direction
// is a link with its bandwidth and latency. A full-duplex cable is two links, each with the full
// bandwidth; a half-duplex cable is two links that share one `resource` (so traffic in both
// directions adds up on it). Vertices and links are dense int32 indices in the order they were
// added; GPU g is the g-th GPU vertex added. Nothing here includes Qt, CUDA or Boost.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessera::topo {

enum class VertexKind : uint8_t { gpu, nvswitch, nic, leaf, spine, switch_ };
std::string to_string(VertexKind kind);

struct VertexInfo {
  VertexKind kind = VertexKind::gpu;
  std::string name;       // "gpu12", "node3.nvswitch", "leaf0", ...
  int32_t gpu = -1;       // GPU index for GPUs, -1 otherwise
  int32_t node = -1;      // server (node) index where it applies, -1 otherwise
};

// What a link is made of, for reports ("which data crosses node boundaries").
enum class LinkClass : uint8_t { nvlink, pcie, network, torus, generic };
std::string to_string(LinkClass link_class);

struct LinkInfo {
  double bytes_per_s = 0;   // per direction
  double latency_s = 0;
  LinkClass link_class = LinkClass::generic;
  int32_t resource = -1;    // index of the capacity this link uses (shared by both directions when half duplex)
  bool inter_node = false;  // true when the link leaves or enters a server
};

// How the topology was built: routing uses it (dimension-ordered on tori).
enum class TopologyShape : uint8_t { ring, torus, fully_connected, single_switch, hierarchical, custom };

// How routes between servers are chosen (routing.hpp): `ecmp` is the shape's own routing (rings
// and tori dimension by dimension, everything else shortest paths with a hashed ECMP choice);
// `pxn` is NCCL's PXN on rail-optimised clusters: an inter-server transfer first crosses the
// NVSwitch to the GPU on the destination's rail and leaves through that GPU's NIC.
enum class RoutingPolicy : uint8_t { ecmp, pxn };
std::string to_string(RoutingPolicy routing);

// Plain vectors inside, so copies and moves are ordinary and keep every index valid.
class Topology {
 public:
  std::string name;
  std::string source;            // preset name or file, for reports
  TopologyShape shape = TopologyShape::custom;
  std::vector<double> resource_bytes_per_s;  // capacity of each resource
  std::vector<int32_t> torus_dims;      // torus: sizes, dimension 0 fastest in the GPU index
  bool bidirectional_ring = true;       // ring: false = unidirectional
  int32_t gpus_per_node = 1;            // hierarchical: GPUs per server (1 otherwise)
  bool rail_optimized = false;          // hierarchical: NIC r of every server on rail r (leaf r)
  RoutingPolicy routing = RoutingPolicy::ecmp;  // the builder's default: pxn when rail-optimised

  // Adds a vertex and returns its index. A GPU vertex must carry the next GPU index
  // (info.gpu == gpu_count()); std::invalid_argument otherwise.
  int32_t add_vertex(VertexInfo info);
  // Adds the link from vertex `from` to vertex `to` and returns its index (std::out_of_range
  // for a vertex that does not exist). It does not add a resource: `info.resource` names one.
  int32_t add_link(int32_t from, int32_t to, const LinkInfo& info);

  int32_t vertex_count() const { return static_cast<int32_t>(vertices_.size()); }
  const VertexInfo& vertex(int32_t vertex) const { return vertices_[static_cast<size_t>(vertex)]; }
  int32_t gpu_count() const { return static_cast<int32_t>(gpu_vertices_.size()); }
  int32_t gpu_vertex(int32_t gpu) const { return gpu_vertices_[static_cast<size_t>(gpu)]; }
  int32_t node_of(int32_t gpu) const { return vertex(gpu_vertex(gpu)).node; }

  int32_t link_count() const { return static_cast<int32_t>(links_.size()); }
  const LinkInfo& link(int32_t link) const { return links_[static_cast<size_t>(link)].info; }
  int32_t link_source(int32_t link) const { return links_[static_cast<size_t>(link)].source; }
  int32_t link_target(int32_t link) const { return links_[static_cast<size_t>(link)].target; }
  // "gpu0->node0.nvswitch": the link's ends by vertex name, as reports and traces print it.
  std::string link_name(int32_t link) const;

  // A vertex's links in the order they were added (so in increasing link index).
  std::span<const int32_t> out_links(int32_t vertex) const { return out_links_[static_cast<size_t>(vertex)]; }
  std::span<const int32_t> in_links(int32_t vertex) const { return in_links_[static_cast<size_t>(vertex)]; }

 private:
  struct Link {
    int32_t source = -1;
    int32_t target = -1;
    LinkInfo info;
  };
  std::vector<VertexInfo> vertices_;
  std::vector<int32_t> gpu_vertices_;  // GPU index -> vertex
  std::vector<Link> links_;
  std::vector<std::vector<int32_t>> out_links_, in_links_;  // per vertex: link indices
};

}  // namespace tessera::topo
