// Topology's own members and the names of its enums. Links are kept as (source, target, info)
// in a dense array plus per-vertex lists of link indices, so a copy is a plain copy of vectors.
#include "tessera/topologies/topology.hpp"

#include <stdexcept>

namespace tessera::topo {

std::string to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::nic: return "nic";
    case VertexKind::leaf: return "leaf";
    case VertexKind::spine: return "spine";
    case VertexKind::switch_: return "switch";
  }
  return "unknown";
}

std::string to_string(LinkClass link_class) {
  switch (link_class) {
    case LinkClass::nvlink: return "nvlink";
    case LinkClass::pcie: return "pcie";
    case LinkClass::network: return "network";
    case LinkClass::torus: return "torus";
    case LinkClass::generic: return "generic";
  }
  return "unknown";
}

std::string to_string(RoutingPolicy routing) {
  switch (routing) {
    case RoutingPolicy::ecmp: return "ecmp";
    case RoutingPolicy::pxn: return "pxn";
  }
  return "unknown";
}

int32_t Topology::add_vertex(VertexInfo info) {
  if (info.kind == VertexKind::gpu && info.gpu != gpu_count()) {
    throw std::invalid_argument("GPU vertex '" + info.name + "' has GPU index " + std::to_string(info.gpu) +
                                "; GPUs are added in order, the next is " + std::to_string(gpu_count()));
  }
  const int32_t vertex = vertex_count();
  if (info.kind == VertexKind::gpu) gpu_vertices_.push_back(vertex);
  vertices_.push_back(std::move(info));
  out_links_.emplace_back();
  in_links_.emplace_back();
  return vertex;
}

int32_t Topology::add_link(int32_t from, int32_t to, const LinkInfo& info) {
  if (from < 0 || from >= vertex_count() || to < 0 || to >= vertex_count()) {
    throw std::out_of_range("link from vertex " + std::to_string(from) + " to vertex " + std::to_string(to) +
                            ": vertices are 0.." + std::to_string(vertex_count() - 1));
  }
  const int32_t link = link_count();
  links_.push_back({from, to, info});
  out_links_[static_cast<size_t>(from)].push_back(link);
  in_links_[static_cast<size_t>(to)].push_back(link);
  return link;
}

std::string Topology::link_name(int32_t link) const {
  return vertex(link_source(link)).name + "->" + vertex(link_target(link)).name;
}

}  // namespace tessera::topo
