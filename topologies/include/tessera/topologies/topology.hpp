#pragma once
// A cluster network as a directed graph on Boost.Graph: GPUs and switches are vertices, every
// link direction is an edge with its bandwidth and latency. A full-duplex cable is two edges,
// each with the full bandwidth; a half-duplex cable is two edges that share one `resource`
// (so traffic in both directions adds up on it). Nothing here includes Qt or CUDA.
#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

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
  int32_t resource = -1;    // index of the capacity this edge uses (shared by both directions when half duplex)
  bool inter_node = false;  // true when the edge leaves or enters a server
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexInfo, LinkInfo>;
using VertexId = boost::graph_traits<Graph>::vertex_descriptor;
using EdgeId = boost::graph_traits<Graph>::edge_descriptor;

// How the topology was built: routing uses it (dimension-ordered on tori).
enum class TopologyShape : uint8_t { ring, torus, fully_connected, single_switch, hierarchical, custom };

// How routes between servers are chosen (routing.hpp): `ecmp` is the shape's own routing (rings
// and tori dimension by dimension, everything else shortest paths with a hashed ECMP choice);
// `pxn` is NCCL's PXN on rail-optimised clusters: an inter-server transfer first crosses the
// NVSwitch to the GPU on the destination's rail and leaves through that GPU's NIC.
enum class RoutingPolicy : uint8_t { ecmp, pxn };
std::string to_string(RoutingPolicy routing);

struct Topology {
  std::string name;
  std::string source;            // preset name or file, for reports
  TopologyShape shape = TopologyShape::custom;
  Graph graph;
  std::vector<VertexId> gpu_vertices;   // GPU index -> vertex
  std::vector<EdgeId> edges;            // dense edge index -> edge (edges[i] has edge_index i)
  std::vector<double> resource_bytes_per_s;  // capacity of each resource
  std::vector<int32_t> torus_dims;      // torus: sizes, dimension 0 fastest in the GPU index
  bool bidirectional_ring = true;       // ring: false = unidirectional
  int32_t gpus_per_node = 1;            // hierarchical: GPUs per server (1 otherwise)
  bool rail_optimized = false;          // hierarchical: NIC r of every server on rail r (leaf r)
  RoutingPolicy routing = RoutingPolicy::ecmp;  // the builder's default: pxn when rail-optimised

  // An edge descriptor points at its properties inside the graph it came from, and Boost's
  // adjacency_list has no move (a move is a copy), so copies re-derive `edges` for their own graph.
  Topology() = default;
  Topology(const Topology& other);
  Topology& operator=(const Topology& other);
  ~Topology() = default;

  int32_t gpu_count() const { return static_cast<int32_t>(gpu_vertices.size()); }
  int32_t node_of(int32_t gpu) const { return graph[gpu_vertices[static_cast<size_t>(gpu)]].node; }
};

}  // namespace tessera::topo
