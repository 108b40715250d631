#pragma once
// Generating a schedule for the network it will run on. The Mesh planner weighs each ring hop
// against compute (mesh_plan.hpp); the hop's cost depends on where the ring runs: on a
// topology, the narrowest link and the slowest fixed cost over the ring's hops under the
// placement (a Q-ring inside a server rides NVLink, a KV-ring across servers the network);
// on the uniform network, the hardware's one link. Compute is the GPU profile's (or the
// calibration's) block rate when the caller has one, else the analytical hardware's.
#include <optional>
#include <string>
#include <vector>

#include "tessera/costmodel/cost.hpp"
#include "tessera/scenario/schedule_cache.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::scenario {

struct PlanTarget {
  costmodel::Hardware hardware;               // the uniform network, message costs, compute
  const topo::Topology* topology = nullptr;   // the network; none: the uniform one
  std::string placement = "linear";           // as --placement, when `ranks` is empty
  std::vector<int32_t> ranks;                 // the placement already chosen (rank -> GPU), if any
  std::optional<double> flops_per_s;          // one block's FLOP rate; default: the hardware's effective rate
};

// The planner's hardware on the uniform network of `hardware`: both rings run over the one
// link, and a hop pays the link's latency plus one message's costs on a network path.
schedules::PlanHardware uniform_plan_hardware(const costmodel::Hardware& hardware);

// The planner's hardware for an a x b mesh tile whose ranks run on `placement[rank]`: per ring,
// the narrowest link on any of its hops and the largest fixed cost of a hop (link latencies
// plus the message costs of its path).
schedules::PlanHardware ring_plan_hardware(const topo::Topology& topology, const std::vector<int32_t>& placement,
                                           TileShape tile, const MessageCosts& message, double flops_per_s);

// schedules::generate_checked with options.plan_hardware filled for `target`. On a topology
// the placement a mesh gets depends on its tile, not on its plan's order: without `ranks`, a
// first generation with the uniform figures gives the placement the rings are measured under.
// With a cache, every generation goes through it (schedule_cache.hpp). `gate` sees the schedule
// generated last before its check (schedules::GeneratedGate); with a cache, after it.
schedules::CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem,
                                            schedules::GeneratorOptions options, const PlanTarget& target,
                                            ScheduleCache* cache = nullptr, const schedules::GeneratedGate& gate = {});

}  // namespace tessera::scenario
