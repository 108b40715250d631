#include "simulate_command.hpp"

#include <chrono>
#include <fstream>
#include <iostream>

#include "problem_flags.hpp"
#include "table.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/units.hpp"
#include "tessera/scenario/evaluate.hpp"
#include "tessera/scenario/collective.hpp"
#include "tessera/scenario/report_json.hpp"

namespace tessera::cli {

using nlohmann::json;

namespace {

template <typename Write>
void write_file(const std::string& path, Write write) {
  std::ofstream file(path);
  if (!file) throw UserError(path + ": cannot write the file");
  write(file);
  if (!file) throw UserError(path + ": writing failed");
}

int run_collective(const ProblemFlags& problem_flags, const HardwareFlags& hardware_flags,
                   const NetworkFlags& network_flags, const SimulateFlags& flags, const CommonFlags& common) {
  const int32_t gpus = gpu_count(problem_flags);
  const auto started = std::chrono::steady_clock::now();
  const scenario::CollectiveText text{flags.collective, flags.size, flags.algorithm, flags.fidelity};
  const scenario::CollectiveEvaluation evaluation =
      scenario::evaluate_collective(text, gpus, make_network(network_flags, gpus), make_hardware(hardware_flags));
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const CollectiveKind collective = evaluation.collective;
  const double bytes = evaluation.bytes;
  const topo::Topology& topology = *evaluation.topology;
  const sim::CollectiveResult& result = evaluation.result;
  if (common.json) {
    json out = scenario::collective_to_json(evaluation, text);
    out["wall_s"] = wall_s;
    std::cout << json_text(out, 2) << "\n";
    return 0;
  }
  Table table({"metric", "value"});
  table.add_row({"collective", to_string(collective) + " of " + format_bytes(bytes) + " over " +
                                   std::to_string(gpus) + " ranks on " + topology.name});
  table.add_row({"time", format_seconds(result.makespan_s)});
  table.add_row({"algbw", format_bytes(result.algbw_bytes_per_s) + "/s"});
  table.add_row({"busbw", format_bytes(result.busbw_bytes_per_s) + "/s"});
  table.add_row({"flows", std::to_string(result.flows)});
  table.add_row({"simulated in", format_seconds(wall_s)});
  table.print(std::cout);
  return 0;
}

}  // namespace

int run_simulate(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags,
                 const HardwareFlags& hardware_flags, const NetworkFlags& network_flags, const SimulateFlags& flags,
                 const CommonFlags& common) {
  if (!flags.collective.empty()) return run_collective(problem_flags, hardware_flags, network_flags, flags, common);
  if (schedule_flags.algorithm.empty())
    throw UserError("simulate needs --algo (a schedule) or --collective (a standalone collective)");
  scenario::Scenario scenario{schedule_flags.algorithm, make_problem(problem_flags),
                              make_options(problem_flags, schedule_flags), make_hardware(hardware_flags), {}, std::nullopt};
  scenario.simulation = scenario::make_simulation(
      scenario::SimulationText{flags.gpu, flags.calibration, flags.fidelity, flags.channels, flags.chunk}, scenario.hardware);
  scenario.network = make_network(network_flags, scenario.options.gpus);
  // The table prints figures of GPUs and links alone (and the critical path's length): a schedule
  // run alike up to rotation is simulated from a period's programs (scenario::priced_by_rotation).
  // A trace, the ops CSV and the JSON (its critical path names ops of every GPU) need every op.
  scenario.figures_only = flags.trace.empty() && flags.ops_csv.empty() && !common.json;
  const auto started = std::chrono::steady_clock::now();
  const scenario::Evaluation evaluation = scenario::evaluate(scenario);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const Schedule& schedule = evaluation.schedule();
  const topo::Topology& topology = *evaluation.simulated_topology;
  const sim::SimResult& result = *evaluation.simulation;
  const topo::RankPlacement& chosen = evaluation.simulated_placement;
  const sim::GpuProfile& gpu = scenario.simulation->gpu;

  if (!flags.trace.empty()) write_file(flags.trace, [&](std::ostream& out) { sim::write_chrome_trace(out, schedule, result); });
  if (!flags.ops_csv.empty()) write_file(flags.ops_csv, [&](std::ostream& out) { sim::write_ops_csv(out, schedule, result); });
  if (!flags.links_csv.empty())
    write_file(flags.links_csv, [&](std::ostream& out) { sim::write_links_csv(out, topology, result); });

  json summary = scenario::simulation_to_json(evaluation, scenario, common.per_gpu);
  summary["wall_s"] = wall_s;
  summary["events_per_s"] = wall_s > 0 ? static_cast<double>(result.events) / wall_s : 0;
  if (common.json) {
    std::cout << json_text(summary, 2) << "\n";
    return 0;
  }
  std::cout << schedule.name() << " on " << topology.name << " (" << flags.fidelity << " fidelity, " << gpu.name
            << ", placement " << chosen.label() << ", routing " << topo::to_string(topology.routing) << ")\n\n";
  Table table({"metric", "value"});
  table.add_row({"makespan", format_seconds(result.makespan_s)});
  table.add_row({"compute, busiest GPU", format_seconds(summary["compute_s_max"].get<double>())});
  table.add_row({"communication, busiest GPU", format_seconds(summary["communication_s_max"].get<double>())});
  table.add_row({"exposed wait, worst GPU", format_seconds(summary["exposed_wait_s_max"].get<double>())});
  table.add_row({"lower bound", format_seconds(result.lower_bound_s) + " (max of compute and bytes in at full link speed)"});
  table.add_row({"makespan / lower bound", format_fixed(summary["makespan_over_lower_bound"].get<double>(), 2)});
  if (summary.contains("busiest_link"))
    table.add_row({"busiest link", summary["busiest_link"].get<std::string>() + ", " +
                                       format_bytes(summary["busiest_link_bytes"].get<double>()) + ", " +
                                       format_fixed(100 * summary["busiest_link_utilization"].get<double>(), 1) +
                                       " % utilised"});
  table.add_row({"critical path", std::to_string(result.critical_path.size()) + " ops"});
  table.add_row({"transfers", std::to_string(result.transfers)});
  table.add_row({"evaluated in", format_seconds(wall_s) + " (generated, placed, priced, simulated; " +
                                     format_fixed(summary["events_per_s"].get<double>() / 1e6, 2) + " M events/s)"});
  table.print(std::cout);
  for (const auto& [path, what] : {std::pair{flags.trace, "Chrome trace"}, std::pair{flags.ops_csv, "ops CSV"},
                                   std::pair{flags.links_csv, "links CSV"}})
    if (!path.empty()) std::cout << "wrote " << what << " to " << path << "\n";
  return 0;
}

}  // namespace tessera::cli
