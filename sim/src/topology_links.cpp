#include "topology_links.hpp"

namespace tessera::sim::links {

double ingress_bytes_per_s(const topo::Topology& topology, int32_t gpu) {
  double total = 0;
  for (int32_t link : topology.in_links(topology.gpu_vertex(gpu))) total += topology.link(link).bytes_per_s;
  return total;
}

std::string resource_name(const topo::Topology& topology, size_t resource) {
  for (int32_t link = 0; link < topology.link_count(); ++link)
    if (static_cast<size_t>(topology.link(link).resource) == resource) return topology.link_name(link);
  return "resource" + std::to_string(resource);
}

}  // namespace tessera::sim::links
