#include "commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <chrono>
#include <fstream>
#include <iostream>

#include "problem_flags.hpp"
#include "table.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/schedule_json.hpp"
#include "tessera/costmodel/checker.hpp"
#include "tessera/costmodel/report_json.hpp"
#include "tessera/scenario/plan_hardware.hpp"
#include "tessera/sim/overheads.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/sim/time_bound.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/link_loads.hpp"
#include "tessera/topologies/placement_search.hpp"
#include "tessera/topologies/routed_network.hpp"

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

struct NetworkFigures {
  std::string topology;
  std::string placement;  // the order used (topologies/placement.hpp names them)
  bool placement_searched = false;  // chosen by --placement auto
  std::string routing;
  int64_t busiest_link_bytes = 0;
  std::string busiest_link;
  std::array<int64_t, kDataKindCount> inter_node_bytes{};
};

struct Costed {
  Schedule schedule;
  CostReport report;
  std::optional<NetworkFigures> network;
  std::optional<double> simulated_s;  // makespan from the simulator, when asked for
  std::optional<TimeLowerBound> simulated_bound = std::nullopt;  // the time bound as the simulator prices
  double rank_s() const { return simulated_s.value_or(report.time_s); }
  // rank_s() over the time bound of the same model: never below 1.
  double rank_over_bound() const {
    const double bound_s = simulated_bound ? simulated_bound->total_s() : report.lower_bound_time.total_s();
    return bound_s > 0 ? rank_s() / bound_s : 0;
  }
};

// What plan ranks by: the simulator (flow fidelity) on the topology, or the analytic model.
struct RankingModel {
  bool simulate = false;
  sim::GpuProfile gpu;
};

std::string link_name(const topo::Topology& topology, int32_t edge) {
  const auto& graph = topology.graph;
  auto id = topology.edges[static_cast<size_t>(edge)];
  return graph[boost::source(id, graph)].name + "->" + graph[boost::target(id, graph)].name;
}

// Generates, checks and costs.
Costed generate_and_cost(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                         const Hardware& hardware, const NetworkChoice& network, const RankingModel& model = {}) {
  // A Mesh schedule is planned for this network and the GPU that prices it (plan_hardware.hpp).
  scenario::PlanTarget target{hardware, network.topology ? &*network.topology : nullptr, network.placement, {}, std::nullopt};
  if (model.simulate)
    target.flops_per_s = model.gpu.block_flops_per_s(problem.dtype, static_cast<double>(problem.seq_len) / options.gpus);
  CheckedSchedule checked = scenario::generate_checked(algorithm, problem, options, target);
  Costed costed{std::move(checked.schedule), {}, std::nullopt, std::nullopt};
  const BlockGrid& grid = *checked.grid;
  const ScheduleAnalysis& analysis = checked.analysis;
  // One placement serves the simulator and the routed cost. With the simulator, "auto" lets it
  // decide near-ties on the busiest link (placement_search.hpp); each order is simulated once.
  std::optional<topo::RankPlacement> chosen;
  if (model.simulate) {
    topo::Topology topology = network.topology ? *network.topology : uniform_topology(costed.schedule.gpus, hardware);
    sim::GpuProfile gpu = model.gpu;
    sim::SimOptions sim_options;
    sim::apply_overheads(hardware, "", gpu, sim_options);
    std::map<std::vector<int32_t>, double> simulated_s;
    auto simulate = [&](const std::vector<int32_t>& ranks) {
      auto [known, added] = simulated_s.emplace(ranks, 0.0);
      if (added)
        known->second = sim::simulate(costed.schedule, grid, analysis, topology, ranks, gpu, sim_options).makespan_s;
      return known->second;
    };
    topo::PlacementSearch search;
    search.simulated_s = simulate;
    chosen = topo::choose_placement(topology, costed.schedule, grid, network.placement, search);
    costed.simulated_s = simulate(chosen->gpu_of_rank);
    costed.simulated_bound = sim::simulated_time_bound(costed.schedule, grid, topology, gpu);
  }
  if (!network.topology) {
    costed.report = cost_schedule(costed.schedule, grid, analysis, hardware);
    return costed;
  }
  const topo::Topology& topology = *network.topology;
  if (!chosen) chosen = topo::choose_placement(topology, costed.schedule, grid, network.placement);
  const std::vector<int32_t>& placement = chosen->gpu_of_rank;
  topo::RoutedNetwork routed(topology, placement);
  costed.report = cost_schedule(costed.schedule, grid, analysis, hardware, &routed);
  topo::Router router(topology);
  topo::LinkLoads loads = topo::compute_link_loads(router, placement, costed.schedule, grid);
  NetworkFigures figures;
  figures.topology = topology.name;
  figures.placement = chosen->order;
  figures.placement_searched = chosen->searched;
  figures.routing = topo::to_string(topology.routing);
  figures.busiest_link_bytes = loads.busiest_edge_bytes;
  if (loads.busiest_edge >= 0) figures.busiest_link = link_name(topology, loads.busiest_edge);
  figures.inter_node_bytes = loads.inter_node_bytes;
  costed.network = figures;
  return costed;
}

json network_to_json(const NetworkFigures& figures) {
  json inter_node = json::object();
  for (int kind = 0; kind < kDataKindCount; ++kind)
    inter_node[to_string(static_cast<DataKind>(kind))] = figures.inter_node_bytes[static_cast<size_t>(kind)];
  return json{{"topology", figures.topology},
              {"placement", figures.placement},
              {"placement_searched", figures.placement_searched},
              {"routing", figures.routing},
              {"busiest_link", figures.busiest_link},
              {"busiest_link_bytes", figures.busiest_link_bytes},
              {"inter_node_bytes_by_kind", inter_node}};
}

json costed_to_json(const Costed& costed, bool per_gpu) {
  json out = cost_report_to_json(costed.schedule, costed.report, per_gpu);
  if (costed.simulated_s) out["simulated_s"] = *costed.simulated_s;
  if (costed.simulated_bound) {
    out["simulated_lower_bound_time_s"] = {{"compute", costed.simulated_bound->compute_s},
                                           {"communication", costed.simulated_bound->communication_s},
                                           {"total", costed.simulated_bound->total_s()}};
    out["simulated_over_lower_bound"] = costed.rank_over_bound();
  }
  if (costed.network) out["network"] = network_to_json(*costed.network);
  return out;
}

// "buffers: kv_recv 2, dkv_recv 2" (receive streams that wait for a free buffer).
std::string describe_buffers(const Schedule& schedule) {
  std::string text;
  for (size_t stream = 0; stream < schedule.stream_names.size(); ++stream) {
    const int32_t buffers = schedule.buffers_of_stream(static_cast<int32_t>(stream));
    if (buffers > 0) text += (text.empty() ? "" : ", ") + schedule.stream_names[stream] + " " + std::to_string(buffers);
  }
  return text.empty() ? "no stream bounded (--buffers 0)" : "buffers: " + text;
}

void print_cost(const Costed& costed, std::ostream& out) {
  const CostReport& report = costed.report;
  out << costed.schedule.name() << " on " << describe_problem(costed.schedule.problem, costed.schedule.gpus) << "\n\n";
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
                 "received chunks and partials held at once; " + describe_buffers(costed.schedule)});
  table.add_row({"CommCom ratio", format_fixed(report.bytes_per_flop * 1e3, 3) + " B/kFLOP",
                 "comm/compute time " + format_fixed(report.comm_over_compute, 2)});
  table.add_row({"lower bound (received)", format_bytes(report.lower_bound.total_bytes()),
                 "no schedule's busiest GPU receives less, heads split or not"});
  table.add_row({"received / lower bound", format_fixed(report.lower_bound_ratio, 2), ""});
  table.add_row({"lower bound (time)", format_seconds(report.lower_bound_time.total_s()),
                 "larger of the least compute and the bytes bound over the busiest GPU's bandwidth"});
  table.add_row({"time / lower bound", format_fixed(report.time_over_lower_bound, 2), ""});
  if (costed.network) {
    const NetworkFigures& network = *costed.network;
    table.add_row({"topology", network.topology, "placement " + network.placement + (network.placement_searched ? " (auto)" : "") +
                                                       ", routing " + network.routing});
    table.add_row({"busiest link", format_bytes(static_cast<double>(network.busiest_link_bytes)), network.busiest_link});
    int64_t inter_node = 0;
    for (int64_t bytes : network.inter_node_bytes) inter_node += bytes;
    table.add_row({"between servers (all GPUs)", format_bytes(static_cast<double>(inter_node)), ""});
    for (int kind = 0; kind < kDataKindCount; ++kind)
      if (network.inter_node_bytes[static_cast<size_t>(kind)] > 0)
        table.add_row({"  " + to_string(static_cast<DataKind>(kind)) + " between servers",
                       format_bytes(static_cast<double>(network.inter_node_bytes[static_cast<size_t>(kind)])), ""});
  }
  table.print(out);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

}  // namespace

int run_schedules(const CommonFlags& common) {
  if (common.json) {
    json list = json::array();
    for (const auto& info : list_generators()) list.push_back({{"name", info.name}, {"summary", info.summary}});
    std::cout << json{{"schedules", list}}.dump(2) << "\n";
    return 0;
  }
  Table table({"schedule", "description"});
  for (const auto& info : list_generators()) table.add_row({info.name, info.summary});
  table.print(std::cout);
  return 0;
}

int run_cost(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const HardwareFlags& hardware_flags,
             const NetworkFlags& network_flags, const CommonFlags& common) {
  Problem problem = make_problem(problem_flags);
  GeneratorOptions options = make_options(problem_flags, schedule_flags);
  Hardware hardware = make_hardware(hardware_flags);
  NetworkChoice network = make_network(network_flags, options.gpus);
  Costed costed = generate_and_cost(schedule_flags.algorithm, problem, options, hardware, network);
  if (common.json) {
    json out = costed_to_json(costed, common.per_gpu);
    out["hardware"] = hardware_to_json(hardware);
    std::cout << out.dump(2) << "\n";
  } else {
    print_cost(costed, std::cout);
  }
  return 0;
}

int run_plan(const ProblemFlags& problem_flags, const HardwareFlags& hardware_flags, const NetworkFlags& network_flags,
             const CommonFlags& common) {
  Problem problem = make_problem(problem_flags);
  ScheduleFlags no_schedule;
  GeneratorOptions base = make_options(problem_flags, no_schedule);
  if (problem.seq_len < base.gpus)
    throw UserError("--seq " + std::to_string(problem.seq_len) + " is smaller than --gpus " +
                    std::to_string(base.gpus) + ": every GPU needs at least one token");
  Hardware hardware = make_hardware(hardware_flags);
  NetworkChoice network = make_network(network_flags, base.gpus);
  RankingModel model;
  if (common.model == "flow") {
    model.simulate = true;
    model.gpu = sim::gpu_profile(common.gpu);
  } else if (common.model != "analytic") {
    throw UserError("--model: '" + common.model + "' is not one of flow, analytic");
  }
  std::vector<Candidate> candidates = plan_candidates(problem, base.gpus, base.layout, base.buffers);
  std::vector<Costed> ranked;
  std::vector<std::pair<std::string, std::string>> skipped;  // name, reason
  const bool progress = stderr_is_terminal() && !common.json;
  const auto started = std::chrono::steady_clock::now();
  // Candidates are independent: cost them on all cores, keep the results in candidate order.
  std::vector<std::optional<Costed>> results(candidates.size());
  std::vector<std::string> refusals(candidates.size());
  std::atomic<size_t> next{0}, finished{0};
  std::mutex progress_mutex;
  auto label_of = [&](const Candidate& candidate) {
    std::string label = candidate.algorithm;
    if (candidate.options.tile) label += " " + to_string(*candidate.options.tile);
    if (!candidate.options.variant.empty()) label += " " + candidate.options.variant;
    return label;
  };
  auto worker = [&] {
    for (size_t index = next++; index < candidates.size(); index = next++) {
      const Candidate& candidate = candidates[index];
      try {
        results[index] = generate_and_cost(candidate.algorithm, problem, candidate.options, hardware, network, model);
      } catch (const UserError& error) {
        refusals[index] = error.what();
      }
      size_t done = ++finished;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        std::cerr << "\r[" << done << "/" << candidates.size() << "] " << label_of(candidate) << "                    "
                  << std::flush;
      }
    }
  };
  {
    const size_t threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 16u));
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
  }
  for (size_t index = 0; index < candidates.size(); ++index) {
    if (results[index]) {
      ranked.push_back(std::move(*results[index]));
    } else {
      skipped.emplace_back(label_of(candidates[index]), refusals[index]);
    }
  }
  if (progress) std::cerr << "\r" << std::string(60, ' ') << "\r";
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Costed& x, const Costed& y) { return x.rank_s() < y.rank_s(); });
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  size_t shown = common.top > 0 ? std::min(ranked.size(), static_cast<size_t>(common.top)) : ranked.size();

  if (common.json) {
    json out;
    out["problem"] = problem_to_json(problem);
    out["gpus"] = base.gpus;
    out["hardware"] = hardware_to_json(hardware);
    out["model"] = model.simulate ? "flow" : "analytic";
    out["topology"] = network.topology ? json(network.topology->name) : json("uniform");
    json ranking = json::array();
    for (size_t index = 0; index < shown; ++index)
      ranking.push_back(costed_to_json(ranked[index], common.per_gpu));
    out["ranking"] = ranking;
    json not_applicable = json::array();
    for (const auto& [name, reason] : skipped) not_applicable.push_back({{"schedule", name}, {"reason", reason}});
    out["not_applicable"] = not_applicable;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "Plan for " << describe_problem(problem, base.gpus) << "\n";
  if (model.simulate)
    std::cout << "Ranked by simulated time (flow-level, max-min fair sharing, " << model.gpu.name
              << " profile); the analytic column is the alpha-beta model below.\n";
  std::cout << "Analytical alpha-beta model: " << format_fixed(hardware.peak_flops_per_s / 1e12, 0) << " TFLOP/s peak at "
            << format_fixed(hardware.compute_efficiency * 100, 0) << " %, ";
  if (network.topology) {
    std::cout << "network " << network.topology->name << " (routed paths, no contention, "
              << topo::to_string(network.topology->routing) << " routing), placement " << network.placement
              << (network.placement == "auto" ? " (chosen per schedule: the placement column)" : "") << "\n\n";
  } else {
    std::cout << "links " << format_fixed(hardware.link_bytes_per_s / 1e9, 1) << " GB/s and "
              << format_fixed(hardware.link_latency_s * 1e6, 1) << " us per GPU pair (uniform network)\n\n";
  }
  std::vector<std::string> headers = {"rank", "schedule"};
  if (network.topology) headers.push_back("placement");
  if (model.simulate) headers.push_back("simulated");
  for (const char* header :
       {"analytic", "vs best", "recv/GPU", "bytes/bound", "time/bound", "peak mem", "transfer buf", "comm/compute"})
    headers.push_back(header);
  Table table(headers);
  const double best = ranked.empty() ? 0 : ranked.front().rank_s();
  for (size_t index = 0; index < shown; ++index) {
    const CostReport& report = ranked[index].report;
    std::vector<std::string> row = {std::to_string(index + 1), ranked[index].schedule.name()};
    if (network.topology) row.push_back(ranked[index].network ? ranked[index].network->placement : "");
    if (model.simulate) row.push_back(format_seconds(ranked[index].rank_s()));
    row.insert(row.end(), {format_seconds(report.time_s), format_fixed(best > 0 ? ranked[index].rank_s() / best : 0, 2) + "x",
                   format_bytes(static_cast<double>(report.recv_bytes_max)),
                   format_fixed(report.lower_bound_ratio, 2) + "x",
                   format_fixed(ranked[index].rank_over_bound(), 2) + "x",
                   format_bytes(static_cast<double>(report.peak_memory_bytes_max)),
                   format_bytes(static_cast<double>(report.peak_transfer_bytes_max)),
                   format_fixed(report.comm_over_compute, 2)});
    table.add_row(row);
  }
  table.print(std::cout);
  if (shown < ranked.size()) std::cout << "(" << ranked.size() - shown << " more; drop --top to see all)\n";
  if (!skipped.empty()) {
    std::cout << "\nNot applicable:\n";
    for (const auto& [name, reason] : skipped) std::cout << "  " << name << ": " << reason << "\n";
  }
  std::cout << "\n" << ranked.size() << " schedules generated, checked and costed in " << format_seconds(elapsed_s)
            << ". Bytes are SI (1 MB = 1e6 B).\n"
            << "bytes/bound: received by the busiest GPU over the least any schedule's busiest GPU receives.\n"
            << "time/bound: the ranked time over the least any schedule takes in the same model (the larger\n"
            << "of the busiest GPU's least compute and the bytes bound over its bandwidth).\n";
  return 0;
}

int run_schedule(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const CommonFlags& common) {
  Problem problem = make_problem(problem_flags);
  GeneratorOptions options = make_options(problem_flags, schedule_flags);
  Schedule schedule = generate_checked(schedule_flags.algorithm, problem, options).schedule;
  if (common.output.empty() || common.output == "-") {
    std::cout << schedule_to_json(schedule).dump() << "\n";
  } else {
    write_schedule_file(schedule, common.output);
    std::cerr << "wrote " << schedule.name() << " (" << schedule.ops.size() << " ops) to " << common.output << "\n";
  }
  return 0;
}

int run_check(const HardwareFlags& hardware_flags, const CommonFlags& common) {
  Schedule schedule = read_schedule_file(common.file);
  BlockGrid grid(schedule.problem, schedule.layout, schedule.chunks());
  CheckResult check = check_schedule(schedule, grid);
  if (common.json) {
    json out = {{"file", common.file}, {"schedule", schedule.name()}, {"valid", check.ok()},
                {"violation", check.violation}, {"ops", schedule.ops.size()}};
    if (check.ok())
      out["cost"] =
          cost_report_to_json(schedule, cost_schedule(schedule, grid, check.analysis, make_hardware(hardware_flags)), false);
    std::cout << out.dump(2) << "\n";
  } else if (check.ok()) {
    std::cout << common.file << ": valid " << schedule.name() << " schedule (" << schedule.ops.size() << " ops, "
              << schedule.gpus << " GPUs)\n";
  } else {
    std::cout << common.file << ": invalid: " << check.violation << "\n";
  }
  return check.ok() ? 0 : 1;
}

}  // namespace tessera::cli
