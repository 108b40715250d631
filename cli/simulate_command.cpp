#include "simulate_command.hpp"

#include <chrono>
#include <fstream>
#include <iostream>

#include "problem_flags.hpp"
#include "table.hpp"
#include "tessera/core/error.hpp"
#include "tessera/scenario/plan_hardware.hpp"
#include "tessera/sim/collective_sim.hpp"
#include "tessera/sim/overheads.hpp"
#include "tessera/sim/trace.hpp"
#include "tessera/topologies/placement_search.hpp"

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
  const sim::CollectiveAlgorithm collective = sim::parse_collective(flags.collective);
  double bytes = 0;
  try {
    bytes = static_cast<double>(parse_count(flags.size));
  } catch (const UserError& error) {
    throw UserError(std::string("--size: ") + error.what());
  }
  const int32_t gpus = gpu_count(problem_flags);
  NetworkChoice network = make_network(network_flags, gpus);
  topo::Topology topology = network.topology ? *network.topology : uniform_topology(gpus, make_hardware(hardware_flags));
  if (topology.gpu_count() < gpus)
    throw UserError("--gpus " + std::to_string(gpus) + " but the topology has " + std::to_string(topology.gpu_count()) +
                    " GPUs");
  std::vector<int32_t> placement(static_cast<size_t>(gpus));
  for (int32_t rank = 0; rank < gpus; ++rank) placement[static_cast<size_t>(rank)] = rank;
  if (flags.algorithm != "ring" && flags.algorithm != "tree")
    throw UserError("--algorithm: '" + flags.algorithm + "' is not one of ring, tree");
  const auto shape = flags.algorithm == "tree" ? sim::AllReduceShape::tree : sim::AllReduceShape::ring;
  const auto started = std::chrono::steady_clock::now();
  sim::CollectiveResult result =
      sim::simulate_collective(collective, bytes, topology, placement, sim::parse_fidelity(flags.fidelity), shape);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (common.json) {
    std::cout << json{{"collective", sim::to_string(collective)}, {"algorithm", flags.algorithm}, {"size_bytes", bytes}, {"ranks", gpus},
                      {"topology", topology.name}, {"fidelity", flags.fidelity}, {"makespan_s", result.makespan_s},
                      {"algbw_bytes_per_s", result.algbw_bytes_per_s}, {"busbw_bytes_per_s", result.busbw_bytes_per_s},
                      {"flows", result.flows}, {"events", result.events}, {"wall_s", wall_s}}
                     .dump(2)
              << "\n";
    return 0;
  }
  Table table({"metric", "value"});
  table.add_row({"collective", sim::to_string(collective) + " of " + format_bytes(bytes) + " over " +
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
  Problem problem = make_problem(problem_flags);
  GeneratorOptions options = make_options(problem_flags, schedule_flags);
  Hardware hardware = make_hardware(hardware_flags);
  sim::GpuProfile gpu = flags.calibration.empty() ? sim::gpu_profile(flags.gpu) : sim::read_calibration(flags.calibration);
  sim::SimOptions sim_options;
  sim_options.fidelity = sim::parse_fidelity(flags.fidelity);
  sim::apply_overheads(hardware, flags.calibration, gpu, sim_options);
  if (flags.channels < 0) throw UserError("--channels: must not be negative");
  sim_options.channels = flags.channels;
  if (!flags.chunk.empty()) {
    try {
      sim_options.chunk_bytes = static_cast<double>(parse_count(flags.chunk));
    } catch (const UserError& error) {
      throw UserError(std::string("--chunk: ") + error.what());
    }
    if (sim_options.chunk_bytes <= 0) throw UserError("--chunk: must be positive");
  }
  CheckedSchedule checked = generate_checked(schedule_flags.algorithm, problem, options);
  const Schedule& schedule = checked.schedule;
  NetworkChoice network = make_network(network_flags, schedule.gpus);
  topo::Topology topology =
      network.topology ? *network.topology : uniform_topology(schedule.gpus, hardware);
  // "auto": near-ties on the busiest link are simulated with this command's GPU and options.
  topo::PlacementSearch search;
  search.simulated_s = [&](const std::vector<int32_t>& ranks) {
    return sim::simulate(schedule, *checked.grid, checked.analysis, topology, ranks, gpu, sim_options).makespan_s;
  };
  const topo::RankPlacement chosen = topo::choose_placement(topology, schedule, *checked.grid, network.placement, search);
  const std::vector<int32_t>& placement = chosen.gpu_of_rank;
  if (schedule_flags.algorithm == "mesh") {
    // Planned again for this network, as placed, and this GPU (scenario/plan_hardware.hpp).
    const double chunk_tokens = static_cast<double>(problem.seq_len) / options.gpus;
    checked = scenario::generate_checked(schedule_flags.algorithm, problem, options,
                                         {hardware, &topology, network.placement, placement,
                                          gpu.block_flops_per_s(problem.dtype, chunk_tokens)});
  }

  const auto started = std::chrono::steady_clock::now();
  sim::SimResult result = sim::simulate(schedule, *checked.grid, checked.analysis, topology, placement, gpu, sim_options);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (!flags.trace.empty()) write_file(flags.trace, [&](std::ostream& out) { sim::write_chrome_trace(out, schedule, result); });
  if (!flags.ops_csv.empty()) write_file(flags.ops_csv, [&](std::ostream& out) { sim::write_ops_csv(out, schedule, result); });
  if (!flags.links_csv.empty())
    write_file(flags.links_csv, [&](std::ostream& out) { sim::write_links_csv(out, topology, result); });

  json summary = sim::simulation_summary_json(schedule, topology, result, common.per_gpu);
  summary["fidelity"] = flags.fidelity;
  summary["gpu"] = gpu.name;
  summary["placement"] = chosen.order;
  summary["routing"] = topo::to_string(topology.routing);
  summary["wall_s"] = wall_s;
  summary["events_per_s"] = wall_s > 0 ? static_cast<double>(result.events) / wall_s : 0;
  if (common.json) {
    std::cout << summary.dump(2) << "\n";
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
  table.add_row({"simulated in", format_seconds(wall_s) + " (" +
                                     format_fixed(summary["events_per_s"].get<double>() / 1e6, 2) + " M events/s)"});
  table.print(std::cout);
  for (const auto& [path, what] : {std::pair{flags.trace, "Chrome trace"}, std::pair{flags.ops_csv, "ops CSV"},
                                   std::pair{flags.links_csv, "links CSV"}})
    if (!path.empty()) std::cout << "wrote " << what << " to " << path << "\n";
  return 0;
}

}  // namespace tessera::cli
