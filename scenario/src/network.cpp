#include "tessera/scenario/network.hpp"

#include "tessera/core/error.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/placement.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::scenario {

Network make_network(const NetworkText& text, int32_t gpus) {
  Network network;
  network.placement = text.placement;
  if (!text.topology.empty()) {
    topo::Topology topology = topo::load_topology(text.topology, gpus);
    topo::set_routing(topology, text.routing);
    if (topology.gpu_count() < gpus)
      throw UserError("--gpus " + std::to_string(gpus) + " but the topology '" + topology.name + "' has " +
                      std::to_string(topology.gpu_count()) + " GPUs");
    // A named order is checked here, where its flag is known ("auto" is searched per schedule).
    if (text.placement != "auto") {
      try {
        topo::order_ranks(topology, gpus, text.placement);
      } catch (const UserError& error) {
        throw UserError(std::string("--placement: ") + error.what());
      }
    }
    network.topology = std::make_shared<const topo::Topology>(std::move(topology));
  } else if (!text.routing.empty()) {
    throw UserError("--routing " + tessera::quoted(text.routing) +
                    ": needs a --topology (the uniform network has one route per pair)");
  }
  return network;
}

std::optional<int32_t> topology_gpu_count(const NetworkText& text) {
  if (text.topology.empty()) return std::nullopt;
  return topo::named_gpu_count(text.topology);
}

topo::Topology uniform_topology(int32_t gpus, const costmodel::Hardware& hardware) {
  // Two hops (GPU -> switch -> GPU) share the end-to-end latency.
  topo::Topology topology = topo::build_switch(gpus, hardware.link_bytes_per_s, hardware.link_latency_s / 2);
  topology.name = "uniform";
  return topology;
}

}  // namespace tessera::scenario
