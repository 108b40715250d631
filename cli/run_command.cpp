#include "run_command.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "table.hpp"
#include "tessera/backend/calibration.hpp"
#include "tessera/backend/executor.hpp"
#include "tessera/core/error.hpp"
#include "tessera/sim/overheads.hpp"
#include "tessera/sim/trace.hpp"
#include "tessera/topologies/placement.hpp"

namespace tessera::cli {

namespace {
// The fp64 reference works on every (query, key) pair on the CPU: keep numerics runs to sizes
// it finishes in about a minute.
constexpr double kMaxPairWork = 4e10;

double pair_work(const Problem& problem) {
  return static_cast<double>(problem.seq_len) * static_cast<double>(problem.seq_len) * static_cast<double>(problem.heads) *
         static_cast<double>(problem.head_dim);
}

std::unique_ptr<backend::ScheduleExecutor> make_backend(const RunFlags& flags) {
  backend::ExecutorOptions options;
  try {
    options.transport = backend::parse_transport(flags.transport);
  } catch (const UserError& error) {
    throw UserError(std::string("--transport: ") + error.what());
  }
  if (!(flags.watchdog_s > 0)) throw UserError("--watchdog-s: must be positive");
  options.watchdog_s = flags.watchdog_s;
  try {
    return backend::make_executor(flags.backend, options);
  } catch (const UserError& error) {
    throw UserError(std::string("--backend: ") + error.what());
  }
}

void write_measured_trace(const std::string& path, const Schedule& schedule, const backend::ExecutionRecord& record) {
  // The simulator's trace format, filled with measured times: both open side by side in Perfetto.
  sim::SimResult measured;
  measured.op_start_s = record.op_start_s;
  measured.op_finish_s = record.op_finish_s;
  measured.makespan_s = record.makespan_s;
  std::ofstream file(path);
  if (!file) throw UserError(path + ": cannot write the trace");
  sim::write_chrome_trace(file, schedule, measured);
  if (!file) throw UserError(path + ": writing the trace failed");
}

int unavailable(const backend::BackendUnavailable& error) {
  std::cerr << "tessera: --backend: " << error.what() << "\n";
  return 1;
}

// The transfer bandwidth and latency a calibration file measured, when it has them.
std::optional<std::pair<double, double>> calibrated_link(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream file(path);
  nlohmann::json json = nlohmann::json::parse(file, nullptr, false);
  if (json.is_discarded() || !json.contains("link")) return std::nullopt;  // read_calibration reports bad files
  const auto& link = json["link"];
  if (!link.is_object() || !link.value("bytes_per_s", nlohmann::json()).is_number() ||
      !link.value("latency_s", nlohmann::json()).is_number() || !(link["bytes_per_s"].get<double>() > 0))
    throw UserError(path + ": link: expected {\"bytes_per_s\": positive number, \"latency_s\": number}");
  return std::pair{link["bytes_per_s"].get<double>(), std::max(0.0, link["latency_s"].get<double>())};
}

// The schedule of a run or validate command: generated and checked, batch 1.
CheckedSchedule executable_schedule(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags,
                                    GeneratorOptions& options) {
  Problem problem = make_problem(problem_flags);
  if (problem.batch != 1) throw UserError("--batch: the executors run one sequence (batch 1)");
  options = make_options(problem_flags, schedule_flags);
  return generate_checked(schedule_flags.algorithm, problem, options);
}
}  // namespace

int run_execute(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const RunFlags& flags,
                const CommonFlags& common) {
  std::unique_ptr<backend::ScheduleExecutor> executor;
  try {
    executor = make_backend(flags);
  } catch (const backend::BackendUnavailable& error) {
    return unavailable(error);
  }
  GeneratorOptions options;
  CheckedSchedule checked = executable_schedule(problem_flags, schedule_flags, options);
  const Schedule& schedule = checked.schedule;
  const Problem& run_problem = schedule.problem;
  const double work = pair_work(run_problem);
  if (work > kMaxPairWork)
    throw UserError("the fp64 reference would need ~" + format_fixed(work / 1e9, 0) +
                    " G multiply-adds per pass on the CPU; use a smaller --seq, --heads or --head-dim (e.g. --seq 4K)");

  backend::AttentionTensors inputs = backend::random_inputs(run_problem, flags.seed);
  backend::AttentionTensors reference = inputs;
  backend::dense_attention(run_problem, reference, run_problem.has_backward());
  // The same computation on one device at the same precision: the yardstick for the error.
  GeneratorOptions single_options = options;
  single_options.gpus = 1;
  single_options.tile.reset();
  CheckedSchedule single = generate_checked("ring", run_problem, single_options);

  auto execute = [&](const CheckedSchedule& what, backend::ExecutionRecord& record) {
    backend::AttentionTensors tensors = inputs;
    tensors.out = reference.out;
    tensors.lse = reference.lse;
    executor->execute(what.schedule, *what.grid, what.analysis, tensors, record);
    return tensors;
  };
  backend::ExecutionRecord record, single_record;
  backend::AttentionTensors distributed = execute(checked, record);
  // Under MPI the yardstick runs on each process's own GPU (a one-rank schedule has no peers).
  std::unique_ptr<backend::ScheduleExecutor> single_executor;
  if (flags.transport == "mpi") {
    RunFlags local = flags;
    local.transport = "local";
    single_executor = make_backend(local);
    std::swap(executor, single_executor);
  }
  backend::AttentionTensors one = execute(single, single_record);
  if (single_executor) std::swap(executor, single_executor);
  if (!record.reporting) return 0;  // an MPI process other than 0: process 0 reports
  if (!flags.trace.empty()) write_measured_trace(flags.trace, schedule, record);

  struct Row {
    const char* name;
    double error, single_error;
  };
  std::vector<Row> rows;
  if (run_problem.has_forward()) {
    rows.push_back({"O", backend::max_abs_error(distributed.out, reference.out), backend::max_abs_error(one.out, reference.out)});
    rows.push_back({"LSE", backend::max_abs_error(distributed.lse, reference.lse), backend::max_abs_error(one.lse, reference.lse)});
  }
  if (run_problem.has_backward()) {
    rows.push_back({"dQ", backend::max_abs_error(distributed.d_q, reference.d_q), backend::max_abs_error(one.d_q, reference.d_q)});
    rows.push_back({"dK", backend::max_abs_error(distributed.d_k, reference.d_k), backend::max_abs_error(one.d_k, reference.d_k)});
    rows.push_back({"dV", backend::max_abs_error(distributed.d_v, reference.d_v), backend::max_abs_error(one.d_v, reference.d_v)});
  }
  bool passed = true;
  for (const Row& row : rows) passed = passed && row.error <= 2 * std::max(row.single_error, 1e-6);

  if (common.json) {
    nlohmann::json errors = nlohmann::json::object();
    for (const Row& row : rows) errors[row.name] = {{"max_abs_error", row.error}, {"single_device_error", row.single_error}};
    std::cout << nlohmann::json{{"schedule", schedule.name()}, {"backend", executor->name()}, {"device", record.device},
                                {"gpus", schedule.gpus}, {"errors", errors}, {"passed", passed},
                                {"makespan_s", record.makespan_s}, {"wall_s", record.wall_s}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << schedule.name() << " on " << record.device << " (" << schedule.gpus << " ranks, seed " << flags.seed
              << "); errors against dense fp64 attention on the same " << to_string(run_problem.dtype)
              << "-rounded inputs\n\n";
    Table table({"output", "max |error|", "single device", "ratio"});
    for (const Row& row : rows)
      table.add_row({row.name, format_fixed(row.error * 1e6, 3) + "e-6", format_fixed(row.single_error * 1e6, 3) + "e-6",
                     format_fixed(row.error / std::max(row.single_error, 1e-12), 2)});
    table.print(std::cout);
    std::cout << "\n" << (passed ? "PASS" : "FAIL") << ": every error within 2x the single-device error (ran in "
              << format_seconds(record.makespan_s) << ")\n";
    if (!flags.trace.empty()) std::cout << "wrote the measured Chrome trace to " << flags.trace << "\n";
  }
  return passed ? 0 : 1;
}

int run_validate(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const HardwareFlags& hardware_flags,
                 const NetworkFlags& network_flags, const RunFlags& flags, const CommonFlags& common) {
  std::unique_ptr<backend::ScheduleExecutor> executor;
  try {
    executor = make_backend(flags);
  } catch (const backend::BackendUnavailable& error) {
    return unavailable(error);
  }
  GeneratorOptions options;
  CheckedSchedule checked = executable_schedule(problem_flags, schedule_flags, options);
  const Schedule& schedule = checked.schedule;
  sim::GpuProfile gpu = flags.calibration.empty() ? sim::gpu_profile(flags.gpu) : sim::read_calibration(flags.calibration);

  // Measured: inputs need the forward's O and LSE for backward passes; their values do not
  // change the time, so a cheap stand-in (zeros and LSE 0) is used instead of a dense reference.
  backend::AttentionTensors tensors = backend::random_inputs(schedule.problem, flags.seed);
  tensors.out.assign(tensors.d_out.size(), 0);
  tensors.lse.assign(static_cast<size_t>(schedule.problem.seq_len * schedule.problem.heads), 0);
  backend::ExecutionRecord record;
  executor->execute(schedule, *checked.grid, checked.analysis, tensors, record);
  if (!record.reporting) return 0;  // an MPI process other than 0: process 0 reports
  if (!flags.trace.empty()) write_measured_trace(flags.trace, schedule, record);

  // Predicted: the simulator on the given network (uniform by default).
  NetworkChoice network = make_network(network_flags, schedule.gpus);
  Hardware hardware = make_hardware(hardware_flags);
  sim::SimOptions sim_options;
  sim::apply_overheads(hardware, flags.calibration, gpu, sim_options);
  if (const auto link = calibrated_link(flags.calibration); link && !network.topology) {
    // The executor's own transfers, as calibrated, are the uniform network; their fitted
    // latency already holds the per-message cost, unless the file states that apart.
    hardware.link_bytes_per_s = link->first;
    hardware.link_latency_s = link->second;
    sim_options.set_message_costs(
        sim::read_message_calibration(flags.calibration, MessageCosts::none()).value_or(MessageCosts::none()));
  }
  topo::Topology topology = network.topology ? *network.topology : uniform_topology(schedule.gpus, hardware);
  std::vector<int32_t> placement = topo::place_ranks(topology, schedule, network.placement);
  sim::SimResult predicted = sim::simulate(schedule, *checked.grid, checked.analysis, topology, placement, gpu, sim_options);

  // Per op kind: summed durations. The CPU interpreter runs ops one after another, so its
  // end-to-end time is compared with the sum of predicted op times, not the parallel makespan.
  struct Kind {
    int64_t count = 0;
    double predicted_s = 0, measured_s = 0;
  };
  std::map<std::string, Kind> kinds;
  double predicted_serial_s = 0;
  // A transfer's time counts from the later of its two sides' starts (the rendezvous), so
  // time spent posted but waiting for the peer is not charged to it.
  auto service_s = [&](const std::vector<double>& start_s, const std::vector<double>& finish_s, size_t index) {
    double begin_s = start_s[index];
    const int32_t partner = checked.analysis.partner[index];
    if (partner >= 0) begin_s = std::max(begin_s, start_s[static_cast<size_t>(partner)]);
    return std::max(0.0, finish_s[index] - begin_s);
  };
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    const std::string name = to_string(op.kind) + (op.kind == OpKind::compute ? std::string(" ") + to_string(op.pass) : "");
    Kind& kind = kinds[name];
    ++kind.count;
    const double predicted_s = service_s(predicted.op_start_s, predicted.op_finish_s, index);
    kind.predicted_s += predicted_s;
    kind.measured_s += service_s(record.op_start_s, record.op_finish_s, index);
    predicted_serial_s += predicted_s;
  }
  const bool serial = flags.backend == "cpu";
  const double predicted_end_s = serial ? predicted_serial_s : predicted.makespan_s;
  const double error = record.makespan_s / predicted_end_s - 1;
  if (common.json) {
    nlohmann::json by_kind = nlohmann::json::object();
    for (const auto& [name, kind] : kinds)
      by_kind[name] = {{"ops", kind.count}, {"predicted_s", kind.predicted_s}, {"measured_s", kind.measured_s}};
    std::cout << nlohmann::json{{"schedule", schedule.name()}, {"backend", executor->name()}, {"device", record.device},
                                {"profile", gpu.name}, {"calibration", flags.calibration}, {"by_kind", by_kind},
                                {"end_to_end", {{"predicted_s", predicted_end_s}, {"measured_s", record.makespan_s},
                                                {"relative_error", error}, {"serial", serial}}}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << schedule.name() << ": predicted (simulator, " << (flags.calibration.empty() ? gpu.name + " profile" : flags.calibration)
            << ", " << topology.name << ") versus measured (" << record.device << ")\n\n";
  Table table({"op kind", "ops", "predicted", "measured", "measured / predicted"});
  for (const auto& [name, kind] : kinds)
    table.add_row({name, std::to_string(kind.count), format_seconds(kind.predicted_s), format_seconds(kind.measured_s),
                   kind.predicted_s > 0 ? format_fixed(kind.measured_s / kind.predicted_s, 2) : "-"});
  table.add_row({serial ? "end to end (serial)" : "end to end", "", format_seconds(predicted_end_s), format_seconds(record.makespan_s),
                 format_fixed(record.makespan_s / predicted_end_s, 2)});
  table.print(std::cout);
  std::cout << "\nend-to-end error " << format_fixed(100 * error, 1) << " % ("
            << (std::abs(error) <= 0.10 ? "within" : "outside") << " 10 %)";
  if (serial) std::cout << "; the CPU interpreter runs ranks one after another, so predicted op times are summed";
  std::cout << "\n";
  return 0;
}

int run_calibrate(const ProblemFlags& problem_flags, const RunFlags& flags) {
  std::unique_ptr<backend::ScheduleExecutor> executor;
  try {
    executor = make_backend(flags);
  } catch (const backend::BackendUnavailable& error) {
    return unavailable(error);
  }
  if (flags.calibration.empty()) throw UserError("--output: calibrate needs a file to write");
  Problem shape = make_problem(problem_flags);
  std::vector<int64_t> sides;
  std::stringstream stream(flags.sides);
  std::string part;
  while (std::getline(stream, part, ',')) {
    try {
      sides.push_back(parse_count(part));
    } catch (const UserError& error) {
      throw UserError(std::string("--sides: ") + error.what());
    }
    if (sides.back() < 1) throw UserError("--sides: block sides must be positive");
  }
  if (sides.size() < 3) throw UserError("--sides: give at least three block sides (e.g. 128,256,512)");
  if (flags.repeats < 1) throw UserError("--repeats: must be at least 1");
  std::sort(sides.begin(), sides.end());
  const backend::ComputeCalibration calibration =
      backend::calibrate_compute(*executor, shape, sides, flags.repeats, [](const std::string& line) { std::cerr << line << "\n"; });
  const nlohmann::json json = backend::calibration_json(calibration, executor->name(), shape);
  std::ofstream file(flags.calibration);
  if (!file) throw UserError(flags.calibration + ": cannot write the calibration file");
  file << json.dump(2) << "\n";
  if (!file) throw UserError(flags.calibration + ": writing failed");
  std::cout << "fitted rate " << format_fixed(calibration.peak_flops_per_s / 1e9, 2) << " GFLOP/s, half efficiency at "
            << format_fixed(calibration.half_efficiency_tokens, 0) << " tokens, overhead "
            << format_seconds(calibration.launch_overhead_s) << " per block; backward/forward "
            << format_fixed(calibration.backward_over_forward, 2) << "; merges "
            << format_bytes(calibration.merge_bytes_per_s) << "/s; transfers "
            << (calibration.link_bytes_per_s > 0 ? format_bytes(calibration.link_bytes_per_s) + "/s + " +
                                                       format_seconds(calibration.link_latency_s)
                                                 : std::string("not measurable"))
            << "\nwrote " << flags.calibration << "\n";
  return 0;
}

}  // namespace tessera::cli
