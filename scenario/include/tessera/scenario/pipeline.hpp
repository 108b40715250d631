#pragma once
// The steps every front end shares: generate (or read) a schedule, check it, and pick the
// network it runs on. A schedule the checker rejects is a bug in its generator (or a bad
// file): it is reported, never costed or simulated.
#include <memory>
#include <optional>
#include <string>

#include "tessera/costmodel/checker.hpp"
#include "tessera/scenario/scenario.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::scenario {

struct CheckedSchedule {
  Schedule schedule;
  std::unique_ptr<BlockGrid> grid;
  ScheduleAnalysis analysis;
};

CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options);

// The network a schedule runs on: a topology (preset or file) with a placement, or none (the
// uniform network of the hardware values).
struct NetworkChoice {
  std::optional<topo::Topology> topology;
  std::string placement = "linear";
};
NetworkChoice make_network(const NetworkText& text, int32_t gpus);

// The topology the simulator runs on when none is given: one non-blocking switch whose
// GPU-to-GPU path has the hardware's bandwidth and latency (the uniform network).
topo::Topology uniform_topology(int32_t gpus, const Hardware& hardware);

}  // namespace tessera::scenario
