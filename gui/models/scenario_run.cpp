#include "models/scenario_run.hpp"

#include <chrono>

#include "tessera/core/error.hpp"
#include "tessera/costmodel/generators.hpp"
#include "tessera/scenario/pipeline.hpp"
#include "tessera/scenario/plan_hardware.hpp"
#include "tessera/sim/overheads.hpp"
#include "tessera/topologies/placement.hpp"
#include "tessera/topologies/routed_network.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::gui {

namespace {

std::string candidate_label(const Candidate& candidate) {
  std::string label = candidate.algorithm;
  if (candidate.options.tile) label += " " + to_string(*candidate.options.tile);
  if (!candidate.options.variant.empty()) label += " " + candidate.options.variant;
  if (candidate.options.layout) label += " " + to_string(*candidate.options.layout);
  return label;
}

}  // namespace

std::string edge_name(const topo::Topology& topology, int32_t edge) {
  const auto& graph = topology.graph;
  const auto id = topology.edges[static_cast<size_t>(edge)];
  return graph[boost::source(id, graph)].name + "->" + graph[boost::target(id, graph)].name;
}

std::shared_ptr<const ScenarioResult> run_scenario(const Session& session, const RunControl& control) {
  const auto started = std::chrono::steady_clock::now();
  auto phase = [&](int percent, const std::string& what) {
    if (control.cancel && control.cancel->load()) throw RunCancelled();
    if (control.progress) control.progress(percent, what);
  };
  auto result = std::make_shared<ScenarioResult>();
  result->session = session;

  phase(0, "reading parameters");
  const Problem problem = scenario::make_problem(session.problem);
  const GeneratorOptions options = scenario::make_options(session.problem, session.schedule);
  const Hardware hardware = scenario::make_hardware(scenario::HardwareValues{});
  if (problem.seq_len < options.gpus)
    throw UserError("--seq " + std::to_string(problem.seq_len) + " is smaller than --gpus " +
                    std::to_string(options.gpus) + ": every GPU needs at least one token");
  if (session.schedule.algorithm.empty()) throw UserError("--algo: choose a schedule");
  // The views hold the n x n block grid and one lane per GPU; beyond this the command line
  // (tessera simulate / plan) is the tool.
  if (options.gpus > kMaxGpus)
    throw UserError("--gpus " + std::to_string(options.gpus) + ": the GUI shows at most " + std::to_string(kMaxGpus) +
                    " GPUs (use `tessera simulate` beyond that)");
  const sim::Fidelity fidelity = sim::parse_fidelity(session.fidelity);
  result->gpu = sim::gpu_profile(session.gpu);

  phase(5, "generating and checking the schedule");
  scenario::CheckedSchedule checked = scenario::generate_checked(session.schedule.algorithm, problem, options);
  result->schedule = std::move(checked.schedule);
  result->grid = std::shared_ptr<const BlockGrid>(std::move(checked.grid));
  result->analysis = std::move(checked.analysis);
  const Schedule& schedule = result->schedule;

  phase(20, "building the network");
  scenario::NetworkChoice network = scenario::make_network(session.network, schedule.gpus);
  result->topology = network.topology ? *network.topology : scenario::uniform_topology(schedule.gpus, hardware);
  if (result->topology.gpu_count() < schedule.gpus)
    throw UserError("--gpus " + std::to_string(schedule.gpus) + " but the topology '" + result->topology.name +
                    "' has " + std::to_string(result->topology.gpu_count()) + " GPUs");
  result->placement = topo::place_ranks(result->topology, schedule, network.placement);
  if (session.schedule.algorithm == "mesh") {
    // Planned again for this network, as placed, and this GPU (scenario/plan_hardware.hpp).
    const double chunk_tokens = static_cast<double>(problem.seq_len) / options.gpus;
    scenario::CheckedSchedule planned = scenario::generate_checked(
        session.schedule.algorithm, problem, options,
        {hardware, &result->topology, network.placement, result->placement,
         result->gpu.block_flops_per_s(problem.dtype, chunk_tokens)});
    result->schedule = std::move(planned.schedule);
    result->grid = std::shared_ptr<const BlockGrid>(std::move(planned.grid));
    result->analysis = std::move(planned.analysis);
  }
  {
    topo::Router router(result->topology);
    result->link_loads = topo::compute_link_loads(router, result->placement, schedule, *result->grid);
  }
  topo::RoutedNetwork routed(result->topology, result->placement);
  result->cost = cost_schedule(schedule, *result->grid, result->analysis, hardware, &routed);

  phase(30, "simulating");
  sim::SimOptions sim_options;
  sim_options.fidelity = fidelity;
  sim_options.cancel = control.cancel;
  sim::apply_overheads(hardware, "", result->gpu, sim_options);
  try {
    result->sim = sim::simulate(schedule, *result->grid, result->analysis, result->topology, result->placement,
                                result->gpu, sim_options);
  } catch (const sim::SimulationCancelled&) {
    throw RunCancelled();
  }

  if (control.compare) {
    const std::vector<Candidate> candidates = plan_candidates(problem, options.gpus, options.layout, options.buffers);
    for (size_t index = 0; index < candidates.size(); ++index) {
      const Candidate& candidate = candidates[index];
      phase(70 + static_cast<int>(30 * index / candidates.size()), "costing " + candidate_label(candidate));
      try {
        scenario::CheckedSchedule other = scenario::generate_checked(
            candidate.algorithm, problem, candidate.options, {hardware, &result->topology, network.placement, {}, std::nullopt});
        const std::vector<int32_t> placement = topo::place_ranks(result->topology, other.schedule, network.placement);
        topo::RoutedNetwork other_network(result->topology, placement);
        const CostReport report = cost_schedule(other.schedule, *other.grid, other.analysis, hardware, &other_network);
        CompareRow row;
        row.label = other.schedule.name();
        row.time_s = report.time_s;
        row.recv_bytes_max = report.recv_bytes_max;
        row.peak_memory_bytes_max = report.peak_memory_bytes_max;
        row.is_current = row.label == schedule.name();
        result->compare.push_back(row);
      } catch (const UserError& error) {
        result->compare_skipped.push_back(candidate_label(candidate) + ": " + error.what());
      }
    }
  }
  phase(100, "done");
  result->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera::gui
