#include "tessera/scenario/pipeline.hpp"

#include <stdexcept>

#include "tessera/core/error.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::scenario {

CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  CheckedSchedule checked;
  checked.schedule = generate_schedule(algorithm, problem, options);
  checked.grid = std::make_unique<BlockGrid>(checked.schedule.problem, checked.schedule.layout, checked.schedule.chunks());
  CheckResult check = check_schedule(checked.schedule, *checked.grid);
  // An invalid schedule from a file is bad input; from a generator it is a bug.
  if (!check.ok() && algorithm == "file")
    throw UserError(options.input_path + ": invalid schedule: " + check.violation);
  if (!check.ok()) throw std::runtime_error("schedule '" + checked.schedule.name() + "' is invalid: " + check.violation);
  checked.analysis = std::move(check.analysis);
  return checked;
}

NetworkChoice make_network(const NetworkText& flags, int32_t gpus) {
  NetworkChoice choice;
  choice.placement = flags.placement;
  if (!flags.topology.empty()) {
    choice.topology = topo::load_topology(flags.topology, gpus);
    topo::set_routing(*choice.topology, flags.routing);
  } else if (!flags.routing.empty()) {
    throw UserError("--routing " + flags.routing + ": needs a --topology (the uniform network has one route per pair)");
  }
  return choice;
}

topo::Topology uniform_topology(int32_t gpus, const Hardware& hardware) {
  // Two hops (GPU -> switch -> GPU) share the end-to-end latency.
  topo::Topology topology = topo::build_switch(gpus, hardware.link_bytes_per_s, hardware.link_latency_s / 2);
  topology.name = "uniform";
  return topology;
}

}  // namespace tessera::scenario
