#include "tessera/scenario/evaluate.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/scenario/mesh_search.hpp"
#include "tessera/scenario/plan_hardware.hpp"
#include "tessera/sim/symmetric_period.hpp"
#include "tessera/sim/time_bound.hpp"
#include "tessera/topologies/placement_search.hpp"
#include "tessera/topologies/routed_network.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::scenario {

using schedules::CheckedSchedule;

namespace {

// Simulates under the placement "auto" prefers: near-ties on the busiest link are decided by
// simulating each (placement_search.hpp); every order is simulated once.
void simulate_placed(const CheckedSchedule& checked, const Scenario& scenario, Evaluation& evaluation) {
  const Simulation& simulation = *scenario.simulation;
  const Schedule& schedule = checked.schedule();
  std::shared_ptr<const topo::Topology> topology = scenario.network.topology;
  const std::vector<int32_t>& shared = scenario.network.device_of_rank;
  if (!shared.empty()) {
    // P ranks on the devices the run used: no placement to choose.
    if (shared.size() != static_cast<size_t>(schedule.gpus) || topology)
      throw UserError("ranks sharing devices need one device per rank and the uniform network");
    const int32_t devices = *std::max_element(shared.begin(), shared.end()) + 1;
    topology = std::make_shared<const topo::Topology>(uniform_topology(devices, scenario.hardware));
    evaluation.simulated_placement = topo::RankPlacement{"as run", shared, false};
    evaluation.simulation = sim::simulate(checked, *topology, shared, simulation.gpu, simulation.options);
    evaluation.figures.simulated_s = evaluation.simulation->makespan_s;
    // (no simulated_bound: the bound assumes a device per rank)
    evaluation.simulated_topology = std::move(topology);
    return;
  }
  if (!topology) topology = std::make_shared<const topo::Topology>(uniform_topology(schedule.gpus, scenario.hardware));
  std::map<std::vector<int32_t>, sim::SimResult> runs;
  auto run = [&](const std::vector<int32_t>& ranks) -> sim::SimResult& {
    auto [known, added] = runs.try_emplace(ranks);
    if (added) known->second = sim::simulate(checked, *topology, ranks, simulation.gpu, simulation.options);
    return known->second;
  };
  topo::PlacementSearch search;
  search.simulated_s = [&](const std::vector<int32_t>& ranks) { return run(ranks).makespan_s; };
  evaluation.simulated_placement = topo::choose_placement(*topology, checked, scenario.network.placement, search);
  evaluation.simulation = std::move(run(evaluation.simulated_placement.gpu_of_rank));
  evaluation.figures.simulated_s = evaluation.simulation->makespan_s;
  evaluation.figures.simulated_bound = sim::simulated_time_bound(schedule, checked.grid(), *topology, simulation.gpu);
  evaluation.simulated_topology = std::move(topology);
}

NetworkFigures network_figures(const CheckedSchedule& checked, const topo::Topology& topology,
                               topo::RankPlacement placement) {
  topo::Router router(topology);
  NetworkFigures figures;
  figures.topology = topology.name;
  figures.routing = topo::to_string(topology.routing);
  figures.loads = topo::compute_link_loads(router, placement.gpu_of_rank, checked);
  if (figures.loads.busiest_edge >= 0) figures.busiest_link = topology.link_name(figures.loads.busiest_edge);
  figures.placement = std::move(placement);
  return figures;
}

}  // namespace

double Figures::time_s() const { return simulated_s.value_or(cost.time_s); }

double Figures::time_over_bound() const {
  const double bound_s = simulated_bound ? simulated_bound->total_s() : cost.lower_bound_time.total_s();
  return bound_s > 0 ? time_s() / bound_s : 0;
}

CheckedSchedule generate(const Scenario& scenario, ScheduleCache* cache, const schedules::GeneratedGate& gate) {
  // Mesh's variant "optimal" without orders given: the best order by simulation (mesh_search.hpp).
  if (scenario.algorithm == "mesh" && scenario.options.variant == "optimal" && !scenario.options.mesh_hops) {
    CheckedSchedule best = search_mesh_order(scenario, cache).best;
    if (gate) gate(best.schedule(), best.grid());
    return best;
  }
  // A Mesh schedule is planned for this network and the GPU that prices it (plan_hardware.hpp).
  PlanTarget target{scenario.hardware, scenario.network.topology.get(), scenario.network.placement, {}, std::nullopt};
  if (scenario.simulation) {
    const double chunk_tokens = static_cast<double>(scenario.problem.seq_len) / scenario.options.gpus;
    target.flops_per_s = scenario.simulation->gpu.block_flops_per_s(scenario.problem.dtype, chunk_tokens);
  }
  // Figures alone: a schedule every GPU runs alike up to rotation needs the programs of a few
  // GPUs alone (core/schedule.hpp's ProgramForm: GPU 0's for a ring, one row of the GPU grid for
  // a Mesh). Its figures are the full program's, priced by the analytical model
  // (tests/costmodel/rotation_test.cpp) or simulated (tests/sim/rotation_sim_test.cpp), at a
  // fraction of the ops.
  schedules::GeneratorOptions options = scenario.options;
  options.by_rotation = priced_by_rotation(scenario);
  std::optional<CheckedSchedule> checked =
      generate_checked(scenario.algorithm, scenario.problem, options, target, cache, gate);
  const topo::Topology* topology = scenario.network.topology.get();
  if (topology == nullptr || checked->schedule().form != ProgramForm::rotation) return std::move(*checked);
  // On a topology the schedule's own period holds only where the network looks the same from
  // every GPU shifted by it (a ring on a single switch); servers and leaves ask for a larger one
  // (a leaf group's GPUs), and some networks for none: then every GPU's program.
  const std::vector<int32_t> placement = topo::order_ranks(*topology, checked->schedule().gpus, scenario.network.placement);
  const int32_t period = sim::symmetric_period(checked->schedule(), *topology, placement);
  if (period == checked->schedule().period) return std::move(*checked);
  checked.reset();  // its block grid (8 MB at 1,024 GPUs) is not kept while the next is made
  options.by_rotation = period > 0;
  options.rotation_period = period;
  return generate_checked(scenario.algorithm, scenario.problem, options, target, cache, gate);
}

bool priced_by_rotation(const Scenario& scenario) {
  const bool per_gpu_simulation =
      scenario.simulation && (scenario.simulation->options.channels > 0 || scenario.simulation->options.device_sharing);
  const bool placement_given = !scenario.network.topology || scenario.network.placement != "auto";
  return scenario.figures_only && !per_gpu_simulation && placement_given && scenario.network.device_of_rank.empty();
}

Evaluation evaluate(const Scenario& scenario, ScheduleCache* cache) {
  return evaluate(generate(scenario, cache), scenario);
}

Evaluation evaluate(const CheckedSchedule& checked, const Scenario& scenario) {
  Evaluation evaluation{checked, {}, nullptr, {}, std::nullopt};
  // One placement serves the simulator and the routed cost.
  if (scenario.simulation) simulate_placed(checked, scenario, evaluation);
  const topo::Topology* topology = scenario.network.topology.get();
  if (topology == nullptr) {
    evaluation.figures.cost = costmodel::cost_schedule(checked, scenario.hardware);
    return evaluation;
  }
  topo::RankPlacement placement = scenario.simulation
                                      ? evaluation.simulated_placement
                                      : topo::choose_placement(*topology, checked, scenario.network.placement);
  const topo::RoutedNetwork routed(*topology, placement.gpu_of_rank);
  evaluation.figures.cost = costmodel::cost_schedule(checked, scenario.hardware, &routed);
  evaluation.figures.network = network_figures(checked, *topology, std::move(placement));
  return evaluation;
}

}  // namespace tessera::scenario
