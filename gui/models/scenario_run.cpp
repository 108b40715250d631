#include "models/scenario_run.hpp"

#include <chrono>

#include "tessera/core/error.hpp"
#include "tessera/scenario/plan.hpp"

namespace tessera::gui {

std::shared_ptr<const ScenarioResult> run_scenario(const Session& session, const RunControl& control) {
  const auto started = std::chrono::steady_clock::now();
  auto phase = [&](int percent, const std::string& what) {
    if (control.cancel && control.cancel->load()) throw RunCancelled();
    if (control.progress) control.progress(percent, what);
  };
  auto result = std::make_shared<ScenarioResult>();
  result->session = session;

  phase(0, "reading parameters");
  scenario::Scenario scenario{session.schedule.algorithm, scenario::make_problem(session.problem),
                              scenario::make_options(session.problem, session.schedule),
                              scenario::make_hardware(scenario::HardwareValues{}), {}, std::nullopt};
  const int32_t gpus = scenario.options.gpus;
  if (session.schedule.algorithm.empty()) throw UserError("--algo: choose a schedule");
  // The views hold the n x n block grid and one lane per GPU; beyond this the command line
  // (tessera simulate / plan) is the tool.
  if (gpus > kMaxGpus)
    throw UserError("--gpus " + std::to_string(gpus) + ": the GUI shows at most " + std::to_string(kMaxGpus) +
                    " GPUs (use `tessera simulate` beyond that)");
  scenario.simulation = scenario::make_simulation(scenario::SimulationText{session.gpu, "", session.fidelity, 0, ""},
                                                  scenario.hardware);
  scenario.simulation->options.cancel = control.cancel;

  phase(5, "building the network");
  scenario.network = scenario::make_network(session.network, gpus);
  // The network view draws the network the schedule runs on: without a topology, the uniform
  // network's switch, whose routed paths are the uniform network's.
  if (!scenario.network.topology)
    scenario.network.topology =
        std::make_shared<const topo::Topology>(scenario::uniform_topology(gpus, scenario.hardware));

  phase(10, "generating, checking, placing, routing and simulating");
  scenario::Evaluation evaluation = [&] {
    try {
      return scenario::evaluate(scenario);
    } catch (const sim::SimulationCancelled&) {
      throw RunCancelled();
    }
  }();
  const schedules::CheckedSchedule& checked = evaluation.checked;
  result->schedule = checked.schedule();
  result->grid = checked.shared_grid();
  result->analysis = checked.analysis();
  result->topology = *scenario.network.topology;
  result->placement = evaluation.figures.network->placement.gpu_of_rank;
  result->link_loads = std::move(evaluation.figures.network->loads);
  result->gpu = scenario.simulation->gpu;
  result->sim = std::move(*evaluation.simulation);
  result->cost = evaluation.figures.cost;
  const std::string current = result->schedule.name();

  if (control.compare) {
    phase(70, "costing every schedule of the problem");
    scenario::Scenario analytic = scenario;
    analytic.simulation.reset();
    scenario::PlanControl plan_control;
    plan_control.cancel = control.cancel;
    plan_control.exhaustive = true;  // the comparison lists every schedule's cost
    plan_control.progress = [&](size_t done, size_t total, const std::string& label) {
      if (control.progress) control.progress(70 + static_cast<int>(30 * done / total), "costed " + label);
    };
    const scenario::PlanResult plan = [&] {
      try {
        return scenario::plan(analytic, plan_control);
      } catch (const sim::SimulationCancelled&) {
        throw RunCancelled();
      }
    }();
    for (const scenario::PlanEntry& entry : plan.entries) {
      if (!entry.figures) {
        result->compare_skipped.push_back(entry.label + ": " + entry.refusal);
        continue;
      }
      const costmodel::CostReport& report = entry.figures->cost;
      CompareRow row;
      row.label = entry.identity.name();
      row.time_s = report.time_s;
      row.recv_bytes_max = report.recv_bytes_max;
      row.peak_memory_bytes_max = report.peak_memory_bytes_max;
      row.is_current = row.label == current;
      result->compare.push_back(row);
    }
  }
  phase(100, "done");
  result->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera::gui
