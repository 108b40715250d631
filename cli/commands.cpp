#include "commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>

#include "problem_flags.hpp"
#include "table.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/progress_line.hpp"
#include "tessera/costmodel/report_json.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/schedule_json.hpp"
#include "tessera/scenario/mesh_search.hpp"
#include "tessera/scenario/plan.hpp"
#include "tessera/scenario/report_json.hpp"

namespace tessera::cli {

using nlohmann::json;

namespace {

std::string describe_problem(const Problem& problem, int32_t gpus) {
  std::string text = std::to_string(gpus) + " GPUs, N=" + format_count(problem.seq_len) +
                     ", H=" + std::to_string(problem.heads) + ", G=" + std::to_string(problem.kv_heads) +
                     ", d=" + std::to_string(problem.head_dim) + ", " + to_string(problem.dtype) + ", " +
                     to_string(problem.mask.kind);
  if (problem.mask.kind == MaskKind::sliding_window) text += " (window " + format_count(problem.mask.window_tokens) + ")";
  if (problem.mask.kind == MaskKind::documents)
    text += " (" + std::to_string(problem.mask.document_lengths.size()) + " documents)";
  if (problem.batch != 1) text += ", batch " + std::to_string(problem.batch);
  return text + ", pass " + to_string(problem.pass);
}

using costmodel::CostReport;
using scenario::Evaluation;
using scenario::NetworkFigures;

// "buffers: kv_recv 2, dkv_recv 2" (receive streams that wait for a free buffer).
std::string describe_buffers(const Schedule& schedule) {
  std::string text;
  for (size_t stream = 0; stream < schedule.stream_names.size(); ++stream) {
    const int32_t buffers = schedule.buffers_of_stream(static_cast<int32_t>(stream));
    if (buffers > 0) text += (text.empty() ? "" : ", ") + schedule.stream_names[stream] + " " + std::to_string(buffers);
  }
  return text.empty() ? "no stream bounded (--buffers 0)" : "buffers: " + text;
}

void print_cost(const Evaluation& evaluation, std::ostream& out) {
  const CostReport& report = evaluation.figures.cost;
  const Schedule& schedule = evaluation.schedule();
  out << schedule.name() << " on " << describe_problem(schedule.problem, schedule.gpus) << "\n\n";
  Table table({"metric", "value", "note"});
  table.add_row({"time (alpha-beta)", format_seconds(report.time_s), "makespan with compute/communication overlap"});
  table.add_row({"compute, busiest GPU", format_seconds(report.compute_s_max), ""});
  table.add_row({"communication, busiest GPU", format_seconds(report.comm_s_max), "sum of its incoming transfers"});
  table.add_row({"received, busiest GPU", format_bytes(static_cast<double>(report.recv_bytes_max)), ""});
  for (int kind = 0; kind < kDataKindCount; ++kind) {
    double bytes = report.recv_bytes_mean_by_kind[static_cast<size_t>(kind)];
    if (bytes > 0)
      table.add_row({"  received " + to_string(static_cast<DataKind>(kind)) + " (mean per GPU)", format_bytes(bytes), ""});
  }
  table.add_row({"FLOPs, busiest GPU", format_fixed(report.flops_max / 1e12, 2) + " TFLOP", ""});
  table.add_row({"peak memory", format_bytes(static_cast<double>(report.peak_memory_bytes_max)),
                 "busiest GPU: resident chunks + transfer buffers"});
  table.add_row({"  transfer buffers", format_bytes(static_cast<double>(report.peak_transfer_bytes_max)),
                 "received chunks and partials held at once; " + describe_buffers(schedule)});
  table.add_row({"CommCom ratio", format_fixed(report.bytes_per_flop * 1e3, 3) + " B/kFLOP",
                 "comm/compute time " + format_fixed(report.comm_over_compute, 2)});
  table.add_row({"lower bound (received)", format_bytes(report.lower_bound.total_bytes()),
                 "no schedule's busiest GPU receives less, heads split or not"});
  table.add_row({"received / lower bound", format_fixed(report.lower_bound_ratio, 2), ""});
  table.add_row({"lower bound (time)", format_seconds(report.lower_bound_time.total_s()),
                 "larger of the least compute and the bytes bound over the busiest GPU's bandwidth"});
  table.add_row({"time / lower bound", format_fixed(report.time_over_lower_bound, 2), ""});
  if (evaluation.figures.network) {
    const NetworkFigures& network = *evaluation.figures.network;
    const auto& inter_node_bytes = network.loads.inter_node_bytes;
    table.add_row({"topology", network.topology, "placement " + network.placement.label() + ", routing " + network.routing});
    table.add_row({"busiest link", format_bytes(static_cast<double>(network.loads.busiest_edge_bytes)), network.busiest_link});
    int64_t inter_node = 0;
    for (int64_t bytes : inter_node_bytes) inter_node += bytes;
    table.add_row({"between servers (all GPUs)", format_bytes(static_cast<double>(inter_node)), ""});
    for (int kind = 0; kind < kDataKindCount; ++kind)
      if (inter_node_bytes[static_cast<size_t>(kind)] > 0)
        table.add_row({"  " + to_string(static_cast<DataKind>(kind)) + " between servers",
                       format_bytes(static_cast<double>(inter_node_bytes[static_cast<size_t>(kind)])), ""});
  }
  table.print(out);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

}  // namespace

int run_schedules(const CommonFlags& common) {
  if (common.json) {
    json list = json::array();
    for (const auto& info : schedules::list_generators()) list.push_back({{"name", info.name}, {"summary", info.summary}});
    std::cout << json_text(json{{"schedules", list}}, 2) << "\n";
    return 0;
  }
  Table table({"schedule", "description"});
  for (const auto& info : schedules::list_generators()) table.add_row({info.name, info.summary});
  table.print(std::cout);
  return 0;
}

int run_cost(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const HardwareFlags& hardware_flags,
             const NetworkFlags& network_flags, const CommonFlags& common) {
  scenario::Scenario scenario{schedule_flags.algorithm, make_problem(problem_flags),
                              make_options(problem_flags, schedule_flags), make_hardware(hardware_flags), {}, std::nullopt};
  scenario.network = make_network(network_flags, scenario.options.gpus);
  scenario.figures_only = true;  // printed: the figures and the schedule's name
  const Evaluation evaluation = scenario::evaluate(scenario);
  if (common.json) {
    std::cout << json_text(scenario::cost_to_json(evaluation, scenario, common.per_gpu), 2) << "\n";
  } else {
    print_cost(evaluation, std::cout);
  }
  return 0;
}

int run_plan(const ProblemFlags& problem_flags, const HardwareFlags& hardware_flags, const NetworkFlags& network_flags,
             const CommonFlags& common) {
  ScheduleFlags no_schedule;
  scenario::Scenario base{"", make_problem(problem_flags), make_options(problem_flags, no_schedule),
                          make_hardware(hardware_flags), {}, std::nullopt};
  const int32_t gpus = base.options.gpus;
  base.network = make_network(network_flags, gpus);
  if (common.model == "flow") {
    base.simulation = scenario::make_simulation(scenario::SimulationText{common.gpu, "", "flow", 0, ""}, base.hardware);
  } else if (common.model != "analytic") {
    throw UserError("--model: '" + common.model + "' is not one of flow, analytic");
  }
  const Problem& problem = base.problem;
  const costmodel::Hardware& hardware = base.hardware;
  const topo::Topology* topology = base.network.topology.get();
  // A progress line with the time left, on a terminal only (as sweep's), wiped when done.
  const auto started = std::chrono::steady_clock::now();
  ProgressLine progress(stderr_is_terminal() ? &std::cerr : nullptr, 0, "schedules");
  scenario::PlanControl control;
  control.exhaustive = common.exhaustive;
  control.progress = [&progress](size_t done, size_t total, const std::string& label) {
    progress.set_total(total);
    progress.set(done, label);
  };
  const scenario::PlanResult plan = scenario::plan(base, control);
  std::vector<const scenario::PlanEntry*> ranked;
  for (size_t position = 0; position < plan.ranking.size(); ++position) ranked.push_back(&plan.ranked(position));
  progress.finish(false);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  size_t shown = common.top > 0 ? std::min(ranked.size(), static_cast<size_t>(common.top)) : ranked.size();

  if (common.json) {
    std::cout << json_text(scenario::plan_to_json(base, plan, static_cast<size_t>(common.top), common.per_gpu), 2) << "\n";
    return 0;
  }
  std::cout << "Plan for " << describe_problem(problem, gpus) << "\n";
  if (base.simulation)
    std::cout << "Ranked by simulated time (flow-level, max-min fair sharing, " << base.simulation->gpu.name
              << " profile); the analytic column is the alpha-beta model below.\n";
  std::cout << "Analytical alpha-beta model: " << format_fixed(hardware.peak_flops_per_s / 1e12, 0) << " TFLOP/s peak at "
            << format_fixed(hardware.compute_efficiency * 100, 0) << " %, ";
  if (topology) {
    std::cout << "network " << topology->name << " (routed paths, no contention, "
              << topo::to_string(topology->routing) << " routing), placement " << base.network.placement
              << (base.network.placement == "auto" ? " (chosen per schedule: the placement column)" : "") << "\n\n";
  } else {
    std::cout << "links " << format_fixed(hardware.link_bytes_per_s / 1e9, 1) << " GB/s and "
              << format_fixed(hardware.link_latency_s * 1e6, 1) << " us per GPU pair (uniform network)\n\n";
  }
  std::vector<std::string> headers = {"rank", "schedule"};
  if (topology) headers.push_back("placement");
  if (base.simulation) headers.push_back("simulated");
  for (const char* header :
       {"analytic", "vs best", "recv/GPU", "bytes/bound", "time/bound", "peak mem", "transfer buf", "comm/compute"})
    headers.push_back(header);
  Table table(headers);
  const double best = ranked.empty() ? 0 : ranked.front()->figures->time_s();
  for (size_t index = 0; index < shown; ++index) {
    const scenario::Figures& figures = *ranked[index]->figures;
    const CostReport& report = figures.cost;
    std::vector<std::string> row = {std::to_string(index + 1), ranked[index]->identity.name()};
    if (topology) row.push_back(figures.network ? figures.network->placement.order : "");
    if (base.simulation) row.push_back(format_seconds(figures.time_s()));
    row.insert(row.end(), {format_seconds(report.time_s), format_fixed(best > 0 ? figures.time_s() / best : 0, 2) + "x",
                   format_bytes(static_cast<double>(report.recv_bytes_max)),
                   format_fixed(report.lower_bound_ratio, 2) + "x",
                   format_fixed(figures.time_over_bound(), 2) + "x",
                   format_bytes(static_cast<double>(report.peak_memory_bytes_max)),
                   format_bytes(static_cast<double>(report.peak_transfer_bytes_max)),
                   format_fixed(report.comm_over_compute, 2)});
    table.add_row(row);
  }
  table.print(std::cout);
  if (shown < ranked.size()) std::cout << "(" << ranked.size() - shown << " more; drop --top to see all)\n";
  size_t set_aside = 0, refused = 0;
  for (const auto& entry : plan.entries) {
    set_aside += entry.set_aside ? 1 : 0;
    refused += !entry.figures && !entry.set_aside ? 1 : 0;
  }
  if (set_aside > 0) {
    std::cout << "\nSet aside, slower than the best whatever their check and pricing would give (their time floor "
                 "first;\n--exhaustive prices them):\n";
    std::vector<const scenario::PlanEntry*> aside;
    for (const auto& entry : plan.entries)
      if (entry.set_aside) aside.push_back(&entry);
    std::stable_sort(aside.begin(), aside.end(),
                     [](const auto* x, const auto* y) { return x->floor.seconds < y->floor.seconds; });
    for (const auto* entry : aside)
      std::cout << "  " << entry->identity.name() << ": at least " << format_seconds(entry->floor.seconds) << " ("
                << format_fixed(best > 0 ? entry->floor.seconds / best : 0, 2) << "x the best), from "
                << entry->floor.describe() << "\n";
  }
  if (refused > 0) {
    std::cout << "\nNot applicable:\n";
    for (const auto& entry : plan.entries)
      if (!entry.figures && !entry.set_aside) std::cout << "  " << entry.label << ": " << entry.refusal << "\n";
  }
  std::cout << "\n" << ranked.size() << " schedules generated, checked and costed";
  if (set_aside > 0) std::cout << ", " << set_aside << " generated and set aside";
  std::cout << " in " << format_seconds(elapsed_s) << ". Bytes are SI (1 MB = 1e6 B).\n"
            << "bytes/bound: received by the busiest GPU over the least any schedule's busiest GPU receives.\n"
            << "time/bound: the ranked time over the least any schedule takes in the same model (the larger\n"
            << "of the busiest GPU's least compute and the bytes bound over its bandwidth).\n";
  return 0;
}

int run_schedule(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const CommonFlags& common) {
  std::optional<schedules::CheckedSchedule> checked;
  if (schedule_flags.algorithm == "mesh" && schedule_flags.variant == "optimal") {
    // The searched optimum (scenario/mesh_search.hpp), on the uniform network of the default
    // hardware, simulated flow-level with the default GPU profile.
    const scenario::Scenario scenario{schedule_flags.algorithm, make_problem(problem_flags),
                                      make_options(problem_flags, schedule_flags), costmodel::Hardware{}, {}, std::nullopt};
    scenario::MeshSearchResult search = scenario::search_mesh_order(scenario);
    std::cerr << "searched " << search.orders << " hop orders (" << search.simulations << " simulations) in "
              << format_seconds(search.wall_s) << "; best simulated makespan " << format_seconds(search.best_s) << "\n";
    checked.emplace(std::move(search.best));
  } else {
    checked.emplace(schedules::generate_checked(schedule_flags.algorithm, make_problem(problem_flags),
                                                make_options(problem_flags, schedule_flags)));
  }
  const Schedule& schedule = checked->schedule();
  if (common.output.empty() || common.output == "-") {
    schedules::write_schedule_json(schedule, std::cout);
    std::cout << "\n";
  } else {
    schedules::write_schedule_file(schedule, common.output);
    std::cerr << "wrote " << schedule.name() << " (" << schedule.ops.size() << " ops) to " << common.output << "\n";
  }
  return 0;
}

int run_check(const HardwareFlags& hardware_flags, const CommonFlags& common) {
  Schedule schedule = schedules::read_schedule_file(common.file);
  std::string violation;
  std::optional<schedules::CheckedSchedule> checked;
  try {
    checked = schedules::check(schedule);
  } catch (const schedules::InvalidSchedule& invalid) {
    violation = invalid.what();
  }
  if (common.json) {
    json out = {{"file", common.file}, {"schedule", schedule.name()}, {"valid", checked.has_value()},
                {"violation", violation}, {"ops", schedule.ops.size()}};
    if (checked) {
      scenario::Scenario scenario{schedule.algorithm, schedule.problem, {}, make_hardware(hardware_flags), {}, std::nullopt};
      out["cost"] = costmodel::cost_report_to_json(schedule, scenario::evaluate(*checked, scenario).figures.cost, false);
    }
    std::cout << json_text(out, 2) << "\n";
  } else if (checked) {
    std::cout << common.file << ": valid " << schedule.name() << " schedule (" << schedule.ops.size() << " ops, "
              << schedule.gpus << " GPUs)\n";
  } else {
    std::cout << common.file << ": invalid: " << violation << "\n";
  }
  return checked ? 0 : 1;
}

}  // namespace tessera::cli
