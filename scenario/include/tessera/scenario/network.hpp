#pragma once
// The network a scenario runs on: a topology (preset or file) with a rank placement, or none,
// the uniform network of the hardware values. The topology types front ends show (links,
// vertices, presets, placements) come through this header.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "tessera/costmodel/cost.hpp"
#include "tessera/scenario/scenario.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/link_loads.hpp"
#include "tessera/topologies/metrics.hpp"
#include "tessera/topologies/placement.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::scenario {

struct Network {
  std::shared_ptr<const topo::Topology> topology;  // none: the uniform network of the hardware
  std::string placement = "linear";                // a named order or "auto" (topologies/placement.hpp)
  // Ranks sharing devices (what `tessera validate` ran: virtual ranks on one GPU, CPU threads
  // on fewer cores): rank r on device device_of_rank[r] of a uniform network of
  // max + 1 devices (no topology then), simulated with the simulation's device_sharing.
  // Empty: a placement of one rank per GPU, as above.
  std::vector<int32_t> device_of_rank;
};

// The topology (with its routing) for `text`, sized for `gpus`; UserError naming the flag.
Network make_network(const NetworkText& text, int32_t gpus);

// The GPU count a scenario takes when none is typed: the topology's own where it names one (a
// file, or a sized preset such as ring-1024), nullopt otherwise (no topology, or a preset sized
// by the GPU count such as h100-ib). UserError naming --topology when it cannot be read.
std::optional<int32_t> topology_gpu_count(const NetworkText& text);

// The topology the simulator runs on when none is given: one non-blocking switch whose
// GPU-to-GPU path has the hardware's bandwidth and latency (the uniform network).
topo::Topology uniform_topology(int32_t gpus, const costmodel::Hardware& hardware);

}  // namespace tessera::scenario
