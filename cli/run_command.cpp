#include "run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/core/progress_line.hpp"
#include "table.hpp"
#include "tessera/backend/calibration.hpp"
#include "tessera/backend/executor.hpp"
#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/backend/tensor_files.hpp"
#include "tessera/core/calibration_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/resource_limits.hpp"
#include "tessera/scenario/evaluate.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/scenario/simulation.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/scenario/speed_adjustment.hpp"

namespace tessera::cli {

using schedules::CheckedSchedule;
using schedules::GeneratorOptions;

namespace {

// validate --repeats: more than a hundred executions steady nothing further.
constexpr int kMostExecutions = 100;

// The index of the median value (the lower middle one for an even count).
size_t median_index(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  return order[(order.size() - 1) / 2];
}

backend::Transport transport_of(const RunFlags& flags) {
  try {
    return backend::parse_transport(flags.transport);
  } catch (const UserError& error) {
    throw UserError(std::string("--transport: ") + error.what());
  }
}

// The devices P ranks sit on: one each where `device_of_rank` is empty, else its highest + 1.
int32_t device_count(const std::vector<int32_t>& device_of_rank, int32_t ranks) {
  return device_of_rank.empty() ? ranks : *std::max_element(device_of_rank.begin(), device_of_rank.end()) + 1;
}

std::unique_ptr<backend::ScheduleExecutor> make_backend(const RunFlags& flags) {
  backend::ExecutorOptions options;
  options.transport = transport_of(flags);
  // Seconds to a std::chrono duration: a finite number of at most a year (31536000 s).
  if (!(flags.watchdog_s > 0 && flags.watchdog_s <= 31536000))
    throw UserError("--watchdog-s: expected seconds from above 0 to 31536000 (a year), got " + std::to_string(flags.watchdog_s));
  options.watchdog_s = flags.watchdog_s;
  if (flags.devices < 0 || flags.devices > 4096)
    throw UserError("--devices: expected 0 (every core) to 4096 cores, got " + std::to_string(flags.devices));
  options.devices = flags.devices;
  try {
    return backend::make_executor(flags.backend, options);
  } catch (const UserError& error) {
    throw UserError(std::string("--backend: ") + error.what());
  }
}

// A backend that cannot run here (no CUDA executor built, no GPU, too few GPUs) is a plain
// refusal with exit code 1, not bad input.
int unavailable(const backend::BackendUnavailable& error) {
  std::cerr << "tessera: --backend: " << error.what() << "\n";
  return 1;
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

// The schedule of a run or validate command: generated and checked, batch 1.
CheckedSchedule executable_schedule(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags,
                                    GeneratorOptions& options) {
  Problem problem = make_problem(problem_flags);
  if (problem.batch != 1) throw UserError("--batch: the executors run one sequence (batch 1)");
  options = make_options(problem_flags, schedule_flags);
  CheckedSchedule checked = schedules::generate_checked(schedule_flags.algorithm, problem, options);
  // A schedule file brings its own problem: the same rule for its batch.
  if (checked.schedule().problem.batch != 1)
    throw UserError(schedule_flags.input + ": problem.batch is " + std::to_string(checked.schedule().problem.batch) +
                    "; the executors run one sequence (batch 1)");
  return checked;
}

// Where the ranks of a run sat: the executor's record says (the CPU executor: P ranks on D
// cores); CUDA's local transport runs every rank as a virtual rank on one GPU; one rank per GPU
// otherwise (empty).
std::vector<int32_t> devices_of_run(const RunFlags& flags, const backend::ExecutionRecord& record, int32_t ranks) {
  if (!record.device_of_rank.empty()) return record.device_of_rank;
  if (flags.backend == "cuda" && flags.transport == "local") return std::vector<int32_t>(static_cast<size_t>(ranks), 0);
  return {};
}

// What the simulator predicts for an executed schedule, in the configuration it ran: P ranks on
// the devices of `device_of_rank` (sharing a device's compute by the calibrated concurrency
// curve, copying between each other at its copy bandwidth; the uniform network between
// devices), or one rank per GPU on the network of the flags: the given topology, or the uniform
// network of the hardware flags. The uniform network's link is the executor's own transfers
// where the calibration file measured them (their fitted latency already holds the per-message
// cost, unless the file states that apart).
struct Prediction {
  sim::SimResult result;
  std::string topology;
  double analytical_s = 0;  // the analytical model's time for the same configuration
};
// The machine's speed at the run against at calibration (scenario/speed_adjustment.hpp): where
// `applied`, predict scales the calibrated compute and devices curve by `factors`.
struct SpeedCheck {
  std::string status = "off";  // "applied", "off", or "unavailable: why"
  CalibratedSpeedReference reference;
  double modelled_block_s = 0;  // the calibrated model's time for the reference block: what the block now is compared with
  SpeedReferenceTimes before, after;
  scenario::SpeedFactors factors_before, factors_after, factors;
  std::vector<double> devices_speedup;  // the calibrated busy-devices curve the factor is against
  bool use_devices = true;              // --speed-reference compute: the compute factor alone
  bool applied() const { return status == "applied"; }
};

Prediction predict(const CheckedSchedule& checked, const HardwareFlags& hardware_flags, const NetworkFlags& network_flags,
                   const std::string& calibration, scenario::Simulation simulation, const std::vector<int32_t>& device_of_rank,
                   const SpeedCheck& speed = {}) {
  if (speed.applied()) simulation.gpu = scenario::with_compute_factor(simulation.gpu, speed.factors.compute);
  const int32_t gpus = checked.schedule().gpus;
  scenario::Network network = make_network(network_flags, gpus);
  costmodel::Hardware hardware = make_hardware(hardware_flags);
  std::optional<CalibrationFile> file;
  if (!calibration.empty()) file = read_calibration_file(calibration);
  if (!device_of_rank.empty()) {
    if (network.topology)
      throw UserError("--topology: this run put " + std::to_string(gpus) +
                      " ranks on fewer devices, which validate predicts on the uniform network (drop --topology)");
    network.device_of_rank = device_of_rank;
    sim::DeviceSharing sharing;
    if (file && file->sharing) {
      sharing.concurrency_speedup = file->sharing->concurrency_speedup;
      sharing.devices_speedup = file->sharing->devices_speedup;
      sharing.copy_bytes_per_s = file->sharing->copy_bytes_per_s.value_or(0);
      if (speed.applied() && speed.use_devices)
        sharing.devices_speedup = scenario::with_devices_factor(sharing.devices_speedup, speed.factors.devices, speed.reference.devices);
    }
    simulation.options.device_sharing = sharing;
  }
  const std::vector<double> curve =
      simulation.options.device_sharing ? simulation.options.device_sharing->concurrency_speedup : std::vector<double>{};
  if (file) {
    // The analytical model priced with the calibrated compute: its one efficiency taken at
    // the schedule's chunk size.
    const Problem& problem = checked.schedule().problem;
    const double chunk_tokens = static_cast<double>(problem.seq_len) / checked.schedule().chunks();
    hardware.peak_flops_per_s = simulation.gpu.peak_flops_per_s(problem.dtype);
    hardware.compute_efficiency = simulation.gpu.efficiency(chunk_tokens, chunk_tokens);
    hardware.kernel_launch_s = simulation.gpu.launch_overhead_s;
    hardware.hbm_bytes_per_s = simulation.gpu.hbm_bytes_per_s;
  }
  if (file && !network.topology && file->link) {
    hardware.link_bytes_per_s = file->link->bytes_per_s;
    hardware.link_latency_s = file->link->latency_s;
    simulation.options.set_message_costs(file->message ? file->message->over(MessageCosts::none()) : MessageCosts::none());
  }
  scenario::Scenario scenario{checked.schedule().algorithm, checked.schedule().problem, {}, hardware, network,
                              std::move(simulation)};
  const scenario::Evaluation evaluation = scenario::evaluate(checked, scenario);
  std::string where = evaluation.simulated_topology->name;
  if (!device_of_rank.empty()) {
    const int32_t devices = device_count(device_of_rank, gpus);
    where = std::to_string(gpus) + " ranks on " + std::to_string(devices) + (devices == 1 ? " device" : " devices");
  }
  const double analytical_s = device_of_rank.empty()
                                  ? evaluation.figures.cost.time_s
                                  : costmodel::time_on_shared_devices_s(evaluation.figures.cost, device_of_rank, curve);
  return {*evaluation.simulation, where, analytical_s};
}

// While a run goes on, a line on the terminal with the time so far against the predicted time.
class RunTicker {
 public:
  RunTicker(double predicted_s) : predicted_s_(predicted_s) {
    thread_ = std::thread([this] {
      ProgressLine line(isatty(STDERR_FILENO) != 0 ? &std::cerr : nullptr, 100, "%");
      const auto start = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stop_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) {
        const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int percent = static_cast<int>(std::min(99.0, 100 * elapsed_s / std::max(predicted_s_, 1e-9)));
        line.set(static_cast<size_t>(percent), "running, " + format_duration(elapsed_s) + " of a predicted " + format_seconds(predicted_s_));
      }
      line.finish();
    });
  }
  ~RunTicker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    stop_.notify_all();
    thread_.join();
  }

 private:
  double predicted_s_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool done_ = false;
  std::thread thread_;
};

int execute_and_compare(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const RunFlags& flags,
                        const CommonFlags& common) {
  std::unique_ptr<backend::ScheduleExecutor> executor = make_backend(flags);
  GeneratorOptions options;
  const CheckedSchedule checked = executable_schedule(problem_flags, schedule_flags, options);
  const Schedule& schedule = checked.schedule();
  const Problem& run_problem = schedule.problem;
  if (const backend::Readiness reference = backend::reference_readiness(run_problem); !reference.ok())
    throw UserError(reference.reason() + "; use a smaller --seq, --heads or --head-dim (e.g. --seq 4K)");
  backend::require_ready(executor->can_run(checked));
  if (!flags.save.empty()) backend::create_tensor_folder(flags.save);

  const backend::ReferenceCase made =
      flags.load.empty() ? backend::reference_case(run_problem, flags.seed)
                         : backend::reference_case(run_problem, backend::load_tensor_files(flags.load, run_problem));
  // The same computation on one device at the same precision: the yardstick for the error.
  GeneratorOptions single_options = options;
  single_options.gpus = 1;
  single_options.tile.reset();
  const CheckedSchedule single = schedules::generate_checked("ring", run_problem, single_options);

  backend::ExecutionRecord record, single_record;
  const backend::AttentionTensors distributed =
      backend::run_from_reference(*executor, checked, made.inputs, made.reference, record);
  // Under MPI the yardstick runs on each process's own GPU (a one-rank schedule has no peers).
  std::unique_ptr<backend::ScheduleExecutor> single_executor;
  if (flags.transport == "mpi") {
    RunFlags local = flags;
    local.transport = "local";
    single_executor = make_backend(local);
    std::swap(executor, single_executor);
  }
  backend::require_ready(executor->can_run(single));
  const backend::AttentionTensors one = backend::run_from_reference(*executor, single, made.inputs, made.reference, single_record);
  if (single_executor) std::swap(executor, single_executor);
  if (!record.reporting) return 0;  // an MPI process other than 0: process 0 reports
  if (!flags.trace.empty()) write_measured_trace(flags.trace, schedule, record);
  if (!flags.save.empty()) backend::save_tensor_files(flags.save, run_problem, made.inputs, distributed);

  const backend::OutputErrors errors = backend::output_errors(distributed, made.reference);
  const backend::OutputErrors single_errors = backend::output_errors(one, made.reference);
  const bool passed = backend::numerics_verdict(run_problem, errors, single_errors).passed;
  struct Row {
    const char* name;
    double error, single_error;
  };
  std::vector<Row> rows;
  for (const backend::NamedOutput& output : backend::kOutputs)
    if (backend::computes(run_problem, output)) rows.push_back({output.name, errors.*output.error, single_errors.*output.error});

  if (common.json) {
    nlohmann::json by_output = nlohmann::json::object();
    for (const Row& row : rows) by_output[row.name] = {{"max_abs_error", row.error}, {"single_device_error", row.single_error}};
    std::cout << json_text(nlohmann::json{{"schedule", schedule.name()}, {"backend", executor->name()}, {"device", record.device},
                                {"gpus", schedule.gpus}, {"errors", by_output}, {"passed", passed},
                                {"makespan_s", record.makespan_s}, {"wall_s", record.wall_s}}, 2)
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
    if (!flags.save.empty()) std::cout << "wrote the inputs and outputs as .npy files to " << flags.save << "\n";
  }
  return passed ? 0 : 1;
}

nlohmann::json times_json(const SpeedReferenceTimes& times) {
  nlohmann::json json = {{"block_s", times.block_s}};
  if (times.devices_s > 0) {
    json["alone_s"] = times.alone_s;
    json["devices_s"] = times.devices_s;
  }
  return json;
}

nlohmann::json speed_json(const SpeedCheck& speed) {
  nlohmann::json json = {{"status", speed.status}, {"compute_factor", speed.factors.compute}, {"devices_factor", speed.factors.devices},
                         {"devices_factor_applied", speed.applied() && speed.use_devices}};
  if (!speed.applied()) return json;
  const CalibratedSpeedReference& reference = speed.reference;
  json["workload"] = {{"side_tokens", reference.side_tokens}, {"heads", reference.heads}, {"head_dim", reference.head_dim},
                      {"dtype", reference.dtype}, {"devices", reference.devices}};
  json["calibration"] = times_json(reference.times);
  json["modelled_block_s"] = speed.modelled_block_s;
  json["calibrated_devices_speedup"] = speed.devices_speedup;
  json["before"] = times_json(speed.before);
  json["after"] = times_json(speed.after);
  json["compute_factor_before"] = speed.factors_before.compute;
  json["compute_factor_after"] = speed.factors_after.compute;
  json["devices_factor_before"] = speed.factors_before.devices;
  json["devices_factor_after"] = speed.factors_after.devices;
  return json;
}

// The speed adjustment in words, with the prediction without it.
std::string speed_text(const SpeedCheck& speed, double unadjusted_s, double unadjusted_error) {
  std::ostringstream text;
  if (!speed.applied()) {
    text << "speed reference: " << speed.status << "\n";
    return text.str();
  }
  const CalibratedSpeedReference& reference = speed.reference;
  text << "speed reference: a " << reference.side_tokens << "-token forward block took " << format_seconds(reference.times.block_s)
       << " at calibration (the calibrated model: " << format_seconds(speed.modelled_block_s) << "), "
       << format_seconds(speed.before.block_s) << " before and " << format_seconds(speed.after.block_s)
       << " after the execution compared: compute x" << format_fixed(speed.factors_before.compute, 3) << " / x"
       << format_fixed(speed.factors_after.compute, 3) << ", mean x" << format_fixed(speed.factors.compute, 3) << "\n";
  if (speed.before.devices_s > 0 && !speed.devices_speedup.empty()) {
    auto busy = [&](const SpeedReferenceTimes& times) { return reference.devices * times.alone_s / times.devices_s; };
    const size_t level = std::min(speed.devices_speedup.size(), static_cast<size_t>(reference.devices)) - 1;
    text << "  " << reference.devices << " busy devices deliver " << format_fixed(speed.devices_speedup[level], 2)
         << "x one in the calibrated curve (" << format_fixed(busy(reference.times), 2) << "x in the reference at calibration), "
         << format_fixed(busy(speed.before), 2) << "x before and " << format_fixed(busy(speed.after), 2)
         << "x after the execution compared: devices x" << format_fixed(speed.factors.devices, 3)
         << (speed.use_devices ? "" : " (not applied: --speed-reference compute)") << "\n";
  }
  text << "  without the adjustment: predicted " << format_seconds(unadjusted_s) << ", end-to-end error "
       << format_fixed(100 * unadjusted_error, 1) << " %\n";
  return text.str();
}

// What validate does about the machine's speed: the flag, and whether the calibration file has
// a reference to time. UserError for a flag value other than on, compute or off.
SpeedCheck speed_check_for(const RunFlags& flags) {
  SpeedCheck check;
  if (flags.speed_reference != "on" && flags.speed_reference != "compute" && flags.speed_reference != "off")
    throw UserError("--speed-reference: expected on, compute or off, got " + quoted(flags.speed_reference));
  if (flags.speed_reference == "off") return check;
  check.use_devices = flags.speed_reference == "on";
  if (flags.calibration.empty()) {
    check.status = "unavailable: no --calibration (factor 1)";
    return check;
  }
  const CalibrationFile file = read_calibration_file(flags.calibration);
  if (!file.speed_reference) {
    check.status = "unavailable: " + flags.calibration + " has no speed_reference (calibrated before it was recorded; factor 1)";
    return check;
  }
  check.reference = *file.speed_reference;
  check.modelled_block_s = scenario::modelled_block_s(check.reference, sim::read_calibration(flags.calibration));
  if (file.sharing) check.devices_speedup = file.sharing->devices_speedup;
  check.status = "applied";
  return check;
}

// Times the reference now on the executor of the run: its factors against the calibration's. A
// reference of several devices on an executor that now has fewer keeps the devices curve
// (factor 1).
struct ReferenceTiming {
  SpeedReferenceTimes times;
  scenario::SpeedFactors factors;
};
ReferenceTiming time_reference(backend::ScheduleExecutor& executor, const SpeedCheck& check) {
  ReferenceTiming timing;
  timing.times = backend::time_speed_reference(executor, check.reference, 5);
  CalibratedSpeedReference compared = check.reference;
  if (timing.times.devices_s <= 0) compared.devices = 1;
  timing.factors = scenario::speed_factors(compared, timing.times, check.devices_speedup, check.modelled_block_s);
  return timing;
}

// `check` for the execution between the reference timings `before` and `after`.
SpeedCheck bracketed(SpeedCheck check, const ReferenceTiming& before, const ReferenceTiming& after) {
  check.before = before.times;
  check.after = after.times;
  check.factors_before = before.factors;
  check.factors_after = after.factors;
  check.factors = scenario::combined_factors(before.factors, after.factors);
  return check;
}

// What a validation resolves: an end-to-end error within it is "within"; a speed reference that
// moved by more than it over the validation's timings is unsteady (scenario::speed_spread).
constexpr double kValidationTolerance = 0.10;

// The spread of the reference's factors over its timings in this validation.
scenario::SpeedSpread reference_spread(const std::vector<ReferenceTiming>& references) {
  std::vector<scenario::SpeedFactors> factors;
  for (const ReferenceTiming& timing : references) factors.push_back(timing.factors);
  return scenario::speed_spread(factors);
}

// Every timed execution: its time, its prediction, the speed factors it was predicted at (none
// without the speed reference), and which one is compared; and each timing of the reference
// (before the first execution and after each) with its own factors, so that a speed that moved
// between two timings can be seen.
nlohmann::json executions_json(const std::vector<double>& makespans_s, const std::vector<Prediction>& predictions,
                               const std::vector<scenario::SpeedFactors>& factors, size_t compared,
                               const std::vector<ReferenceTiming>& references) {
  nlohmann::json json = {{"timed", makespans_s.size()}, {"warm_up", makespans_s.size() > 1},
                         {"makespans_s", makespans_s}, {"compared", compared}};
  std::vector<double> predicted_s, compute_factors, devices_factors;
  for (const Prediction& prediction : predictions) predicted_s.push_back(prediction.result.makespan_s);
  for (const scenario::SpeedFactors& execution : factors) {
    compute_factors.push_back(execution.compute);
    devices_factors.push_back(execution.devices);
  }
  json["predicted_s"] = predicted_s;
  if (!factors.empty()) {
    json["compute_factors"] = compute_factors;
    json["devices_factors"] = devices_factors;
  }
  if (!references.empty()) {
    nlohmann::json timings = nlohmann::json::array();
    for (const ReferenceTiming& timing : references)
      timings.push_back({{"compute_factor", timing.factors.compute}, {"devices_factor", timing.factors.devices}});
    json["reference_timings"] = timings;
    const scenario::SpeedSpread spread = reference_spread(references);
    json["reference_spread"] = {{"compute", spread.compute}, {"devices", spread.devices},
                                {"tolerance", kValidationTolerance}, {"steady", spread.steady(kValidationTolerance)}};
  }
  return json;
}

// The row of an op in validate's table: its kind, and the pass of a compute op.
std::string op_kind_name(const Op& op) {
  return to_string(op.kind) + (op.kind == OpKind::compute ? std::string(" ") + to_string(op.pass) : "");
}

// An op's service time in a run or a prediction. A transfer's time counts from the later of its
// two sides' starts (the rendezvous), so time spent posted but waiting for the peer is not
// charged to it.
double service_time_s(const CheckedSchedule& checked, const std::vector<double>& start_s, const std::vector<double>& finish_s,
                      size_t index) {
  double begin_s = start_s[index];
  const int32_t partner = checked.analysis().partner[index];
  if (partner >= 0) begin_s = std::max(begin_s, start_s[static_cast<size_t>(partner)]);
  return std::max(0.0, finish_s[index] - begin_s);
}

// validate --predict-only: the prediction validate starts from, for the configuration the backend
// and transport would run, at the calibration's speed; nothing executes, so a GPU's prediction
// (P virtual ranks on one GPU) can be examined, and its calibration varied, on any machine.
int predict_without_executing(const CheckedSchedule& checked, const HardwareFlags& hardware_flags,
                              const NetworkFlags& network_flags, const RunFlags& flags, const scenario::Simulation& simulation,
                              const CommonFlags& common) {
  const Schedule& schedule = checked.schedule();
  std::vector<int32_t> device_of_rank;
  if (flags.backend == "cuda") {
    transport_of(flags);  // refused here as make_backend would refuse it
    device_of_rank = devices_of_run(flags, {}, schedule.gpus);
  } else {
    device_of_rank = make_backend(flags)->planned_devices(schedule.gpus);
  }
  const Prediction predicted = predict(checked, hardware_flags, network_flags, flags.calibration, simulation, device_of_rank);
  std::map<std::string, std::pair<int64_t, double>> kinds;  // ops, summed predicted service time
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    auto& [count, seconds] = kinds[op_kind_name(schedule.ops[index])];
    ++count;
    seconds += service_time_s(checked, predicted.result.op_start_s, predicted.result.op_finish_s, index);
  }
  const int32_t devices = device_count(device_of_rank, schedule.gpus);
  const std::string source = flags.calibration.empty() ? simulation.gpu.name + " profile" : flags.calibration;
  if (common.json) {
    nlohmann::json by_kind = nlohmann::json::object();
    for (const auto& [name, kind] : kinds) by_kind[name] = {{"ops", kind.first}, {"predicted_s", kind.second}};
    std::cout << json_text(nlohmann::json{{"schedule", schedule.name()}, {"backend", flags.backend}, {"transport", flags.transport},
                                          {"ranks", schedule.gpus}, {"devices", devices}, {"profile", simulation.gpu.name},
                                          {"calibration", flags.calibration}, {"by_kind", by_kind},
                                          {"end_to_end", {{"predicted_s", predicted.result.makespan_s},
                                                          {"analytical_s", predicted.analytical_s}}}},
                           2)
              << "\n";
    return 0;
  }
  std::cout << schedule.name() << ": predicted (simulator, " << source << ", " << predicted.topology
            << ") at the calibration's speed; not executed\n\n";
  Table table({"op kind", "ops", "predicted"});
  for (const auto& [name, kind] : kinds) table.add_row({name, std::to_string(kind.first), format_seconds(kind.second)});
  table.add_row({"end to end", "", format_seconds(predicted.result.makespan_s)});
  table.print(std::cout);
  std::cout << "\n" << schedule.gpus << " ranks on " << devices << (devices == 1 ? " device" : " devices")
            << "; per op kind, summed op times; the analytical model: " << format_seconds(predicted.analytical_s) << "\n";
  return 0;
}

int execute_and_predict(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags,
                        const HardwareFlags& hardware_flags, const NetworkFlags& network_flags, const RunFlags& flags,
                        const CommonFlags& common) {
  if (flags.executions < 1 || flags.executions > kMostExecutions)
    throw UserError("--repeats: expected 1 to " + std::to_string(kMostExecutions) + " timed executions, got " +
                    std::to_string(flags.executions));
  GeneratorOptions options;
  const CheckedSchedule checked = executable_schedule(problem_flags, schedule_flags, options);
  const Schedule& schedule = checked.schedule();
  // The GPU model (and a calibration file's errors) before the run, the network after it.
  scenario::SimulationText simulation_text;
  simulation_text.gpu = flags.gpu;
  simulation_text.calibration = flags.calibration;
  const scenario::Simulation simulation = scenario::make_simulation(simulation_text, make_hardware(hardware_flags));
  if (flags.predict_only) return predict_without_executing(checked, hardware_flags, network_flags, flags, simulation, common);
  std::unique_ptr<backend::ScheduleExecutor> executor = make_backend(flags);
  backend::require_ready(executor->can_run(checked));
  SpeedCheck speed = speed_check_for(flags);

  // Measured: inputs need the forward's O and LSE for backward passes; their values do not
  // change the time, so a cheap stand-in (zeros and LSE 0) is used instead of a dense reference.
  backend::AttentionTensors tensors = backend::random_inputs(schedule.problem, flags.seed);
  tensors.out.assign(tensors.d_out.size(), 0);
  tensors.lse.assign(static_cast<size_t>(schedule.problem.seq_len * schedule.problem.heads), 0);
  // The configuration this run will have, predicted first so that the progress line has an ETA.
  backend::ExecutionRecord planned;
  planned.device_of_rank = executor->planned_devices(schedule.gpus);
  const Prediction before =
      predict(checked, hardware_flags, network_flags, flags.calibration, simulation, devices_of_run(flags, planned, schedule.gpus));
  // Repeated executions: one execution on a shared machine can land in a slow or a fast spell
  // (on the two-core VM, runs of similar schedules measured 0.45 s to 0.87 s), so with
  // --repeats N the first, untimed, execution warms caches, pages and threads, and N timed ones
  // follow. The speed reference is timed before the first and after every one, so that each
  // execution is predicted at the speed of the seconds around it, not of the whole series: on
  // that VM the reference's time moved by up to 50 % within the few seconds of three executions.
  // Compared: the execution of median measured / predicted (adjusted; without the reference,
  // of median time), the lower middle one for an even N.
  const int timed = flags.executions;
  std::vector<backend::ExecutionRecord> records(static_cast<size_t>(timed));
  std::vector<ReferenceTiming> references;
  {
    RunTicker ticker(before.result.makespan_s * (timed > 1 ? timed + 1 : 1));
    if (timed > 1) {
      backend::ExecutionRecord warm_up;
      executor->execute(checked, tensors, warm_up);
    }
    if (speed.applied()) references.push_back(time_reference(*executor, speed));
    for (backend::ExecutionRecord& run : records) {
      executor->execute(checked, tensors, run);
      if (speed.applied()) references.push_back(time_reference(*executor, speed));
    }
  }
  if (!records.front().reporting) return 0;  // an MPI process other than 0: process 0 reports
  std::vector<double> makespans_s;
  for (const backend::ExecutionRecord& run : records) makespans_s.push_back(run.makespan_s);
  const std::vector<int32_t> planned_devices = devices_of_run(flags, planned, schedule.gpus);
  // Each execution's prediction at its own speed (the planned one where the speed is not applied).
  std::vector<Prediction> predictions;
  std::vector<scenario::SpeedFactors> factors;  // with the speed reference: each execution's
  std::vector<double> ratios;
  for (size_t index = 0; index < records.size(); ++index) {
    const std::vector<int32_t> devices = devices_of_run(flags, records[index], schedule.gpus);
    if (speed.applied()) {
      const SpeedCheck around = bracketed(speed, references[index], references[index + 1]);
      factors.push_back(around.factors);
      predictions.push_back(predict(checked, hardware_flags, network_flags, flags.calibration, simulation, devices, around));
    } else if (devices == planned_devices)
      predictions.push_back(before);
    else
      predictions.push_back(predict(checked, hardware_flags, network_flags, flags.calibration, simulation, devices));
    ratios.push_back(makespans_s[index] / predictions.back().result.makespan_s);
  }
  const size_t compared = median_index(speed.applied() ? ratios : makespans_s);
  const backend::ExecutionRecord& record = records[compared];
  if (speed.applied()) speed = bracketed(speed, references[compared], references[compared + 1]);
  if (!flags.trace.empty()) write_measured_trace(flags.trace, schedule, record);

  // What ran is what is predicted: the record's own devices.
  const std::vector<int32_t> device_of_rank = devices_of_run(flags, record, schedule.gpus);
  // Unadjusted: at the speed of the calibration; the headline prediction at the speed of now.
  const Prediction unadjusted = device_of_rank == planned_devices
                                    ? before
                                    : predict(checked, hardware_flags, network_flags, flags.calibration, simulation, device_of_rank);
  const Prediction& predicted = predictions[compared];
  // The compute factor alone (the busy-devices curve as calibrated), for comparison.
  SpeedCheck compute_speed = speed;
  compute_speed.use_devices = false;
  const Prediction compute_only =
      speed.applied() && speed.use_devices
          ? predict(checked, hardware_flags, network_flags, flags.calibration, simulation, device_of_rank, compute_speed)
          : predicted;
  const double compute_only_error = record.makespan_s / compute_only.result.makespan_s - 1;
  const sim::GpuProfile& gpu = simulation.gpu;

  // Per op kind: summed durations.
  struct Kind {
    int64_t count = 0;
    double predicted_s = 0, measured_s = 0;
  };
  std::map<std::string, Kind> kinds;
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    Kind& kind = kinds[op_kind_name(schedule.ops[index])];
    ++kind.count;
    kind.predicted_s += service_time_s(checked, predicted.result.op_start_s, predicted.result.op_finish_s, index);
    kind.measured_s += service_time_s(checked, record.op_start_s, record.op_finish_s, index);
  }
  const double predicted_end_s = predicted.result.makespan_s;
  const double error = record.makespan_s / predicted_end_s - 1;
  const double unadjusted_end_s = unadjusted.result.makespan_s;
  const double unadjusted_error = record.makespan_s / unadjusted_end_s - 1;
  const int32_t devices = device_count(device_of_rank, schedule.gpus);
  if (common.json) {
    nlohmann::json by_kind = nlohmann::json::object();
    for (const auto& [name, kind] : kinds)
      by_kind[name] = {{"ops", kind.count}, {"predicted_s", kind.predicted_s}, {"measured_s", kind.measured_s},
                       {"abs_error", kind.predicted_s > 0 ? std::abs(kind.measured_s / kind.predicted_s - 1) : 0.0}};
    std::cout << json_text(nlohmann::json{{"schedule", schedule.name()}, {"backend", executor->name()}, {"device", record.device},
                                {"ranks", schedule.gpus}, {"devices", devices},
                                {"profile", gpu.name}, {"calibration", flags.calibration}, {"by_kind", by_kind},
                                {"end_to_end", {{"predicted_s", predicted_end_s}, {"measured_s", record.makespan_s},
                                                {"relative_error", error}, {"abs_error", std::abs(error)},
                                                {"analytical_s", predicted.analytical_s},
                                                {"unadjusted", {{"predicted_s", unadjusted_end_s},
                                                                {"relative_error", unadjusted_error},
                                                                {"abs_error", std::abs(unadjusted_error)}}},
                                                {"compute_only", {{"predicted_s", compute_only.result.makespan_s},
                                                                  {"relative_error", compute_only_error},
                                                                  {"abs_error", std::abs(compute_only_error)}}}}},
                                {"host_issue_s", record.host_issue_s},
                                {"executions", executions_json(makespans_s, predictions, factors, compared, references)},
                                {"speed_reference", speed_json(speed)}}, 2)
              << "\n";
    return 0;
  }
  std::cout << schedule.name() << ": predicted (simulator, " << (flags.calibration.empty() ? gpu.name + " profile" : flags.calibration)
            << ", " << predicted.topology << ") versus measured (" << record.device << ")\n\n";
  Table table({"op kind", "ops", "predicted", "measured", "measured / predicted", "|error|"});
  auto error_text = [](double predicted_s, double measured_s) {
    return predicted_s > 0 ? format_fixed(100 * std::abs(measured_s / predicted_s - 1), 1) + " %" : std::string("-");
  };
  for (const auto& [name, kind] : kinds)
    table.add_row({name, std::to_string(kind.count), format_seconds(kind.predicted_s), format_seconds(kind.measured_s),
                   kind.predicted_s > 0 ? format_fixed(kind.measured_s / kind.predicted_s, 2) : "-",
                   error_text(kind.predicted_s, kind.measured_s)});
  table.add_row({"end to end", "", format_seconds(predicted_end_s), format_seconds(record.makespan_s),
                 format_fixed(record.makespan_s / predicted_end_s, 2), error_text(predicted_end_s, record.makespan_s)});
  table.print(std::cout);
  std::cout << "\nend-to-end error " << format_fixed(100 * error, 1) << " % (|error| " << format_fixed(100 * std::abs(error), 1)
            << " %, " << (std::abs(error) <= kValidationTolerance ? "within" : "outside") << " "
            << format_fixed(100 * kValidationTolerance, 0) << " %); " << schedule.gpus << " ranks on "
            << devices << (devices == 1 ? " device" : " devices") << "; per op kind, summed op times (ops on a shared device "
            << "run concurrently, so they add up to more than the end to end)\n";
  if (makespans_s.size() > 1) {
    const auto [fastest, slowest] = std::minmax_element(makespans_s.begin(), makespans_s.end());
    std::cout << "measured: execution " << compared + 1 << " of " << makespans_s.size() << " after a warm-up, the one of median "
              << (speed.applied() ? "measured / predicted" : "time") << " (they took "
              << format_seconds(*fastest) << " to " << format_seconds(*slowest) << ")\n";
  }
  // A run whose host is still issuing ops near its end was paced by the host, which the
  // prediction does not model: worth saying before reading the error as the model's.
  if (record.host_issue_s > 0)
    std::cout << "the host issued the compared execution's ops in " << format_seconds(record.host_issue_s) << " from its start, "
              << (record.host_issue_s < 0.8 * record.makespan_s ? "well before its end: the device's work set its pace"
                                                                 : "near or past its end: the host's issuing may have set its pace")
              << "\n";
  std::cout << speed_text(speed, unadjusted_end_s, unadjusted_error);
  if (references.size() > 1) {
    // A machine whose speed moves between timings seconds apart cannot be resolved to the
    // tolerance by any one execution: said here, so that such an error is not read as the model's.
    const scenario::SpeedSpread spread = reference_spread(references);
    std::cout << "  over its " << references.size() << " timings the reference's compute factor moved by "
              << format_fixed(100 * (spread.compute - 1), 1) << " % and its devices factor by "
              << format_fixed(100 * (spread.devices - 1), 1) << " % (largest over smallest): "
              << (spread.steady(kValidationTolerance)
                      ? "steady, within " + format_fixed(100 * kValidationTolerance, 0) + " %"
                      : "unsteady, more than the " + format_fixed(100 * kValidationTolerance, 0) +
                            " % a validation resolves: the machine's speed moved during it")
              << "\n";
  }
  return 0;
}

int calibrate(const ProblemFlags& problem_flags, const RunFlags& flags) {
  std::unique_ptr<backend::ScheduleExecutor> executor = make_backend(flags);
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
  // --concurrency-side: the curve's blocks (0: the middle of --sides), checked with them below.
  int64_t concurrency_side = 0;
  if (!flags.concurrency_side.empty()) {
    try {
      concurrency_side = parse_count(flags.concurrency_side);
    } catch (const UserError& error) {
      throw UserError(std::string("--concurrency-side: ") + error.what());
    }
    if (concurrency_side < 1 || concurrency_side > kMaxSeqTokens)
      throw UserError("--concurrency-side: expected a block side of 1 to 2^31 tokens, got " + flags.concurrency_side);
  }
  // The executor holds every tensor of the largest block (fp32 on the CPU, with the fp64
  // reference of the backward pass beside it): refused before allocating when it cannot fit.
  Problem largest = shape;
  largest.seq_len = std::min(std::max(*std::max_element(sides.begin(), sides.end()), concurrency_side), kMaxSeqTokens);
  largest.mask = Mask{};
  if (*std::max_element(sides.begin(), sides.end()) > kMaxSeqTokens)
    throw UserError("--sides: a block side is above the supported 2^31 tokens");
  require_memory(problem_bytes(largest) / bytes_per_element(largest.dtype) * 12, "--sides, --concurrency-side: the largest block");
  // The median of a few runs is the figure; a thousand is already far past what steadies it.
  if (flags.repeats < 1 || flags.repeats > 1000)
    throw UserError("--repeats: expected 1 to 1000 timed runs per block, got " + std::to_string(flags.repeats));
  std::sort(sides.begin(), sides.end());
  // Ranks sharing a device: the CPU executor on one core; CUDA's local transport already runs
  // every rank on one GPU. Other transports put a rank per GPU: nothing shares.
  std::unique_ptr<backend::ScheduleExecutor> one_core;
  backend::ScheduleExecutor* one_device = nullptr;
  if (flags.backend == "cpu") {
    RunFlags single = flags;
    single.devices = 1;
    one_core = make_backend(single);
    one_device = one_core.get();
  } else if (flags.transport == "local") {
    one_device = executor.get();
  }
  if (flags.concurrency < 1 || flags.concurrency > 64)
    throw UserError("--concurrency: expected 1 to 64 concurrent blocks, got " + std::to_string(flags.concurrency));
  if (flags.block_attempts < 1 || flags.block_attempts > 20)
    throw UserError("--block-attempts: expected 1 to 20 timings of the blocks, got " + std::to_string(flags.block_attempts));
  if (!(flags.max_block_spread_percent >= 0 && flags.max_block_spread_percent <= 1e4))
    throw UserError("--max-block-spread: expected a percent from 0 to 10000, got " + format_fixed(flags.max_block_spread_percent, 2));
  const backend::BlockRetiming retiming{flags.max_block_spread_percent / 100, flags.block_attempts};
  const bool terminal = isatty(STDERR_FILENO) != 0;
  ProgressLine progress(terminal ? &std::cerr : nullptr, 0, "steps");
  const backend::ComputeCalibration calibration = backend::calibrate_compute(
      *executor, shape, sides, flags.repeats,
      [&](int done, int total, const std::string& line) {
        if (terminal) {
          progress.set_total(static_cast<size_t>(total));
          progress.set(static_cast<size_t>(done), line);
        } else
          std::cerr << line << "\n";
      },
      one_device, flags.concurrency, retiming, concurrency_side);
  progress.finish();
  write_calibration_file(flags.calibration, backend::calibration_file(calibration, executor->name(), shape));
  std::cout << "fitted rate " << format_fixed(calibration.peak_flops_per_s / 1e9, 2) << " GFLOP/s, half efficiency at "
            << format_fixed(calibration.half_efficiency_tokens, 0) << " tokens (backward "
            << format_fixed(calibration.backward_half_efficiency_tokens, 0) << "), masked pairs at "
            << format_fixed(calibration.masked_pair_cost, 2) << " (backward " << format_fixed(calibration.backward_masked_pair_cost, 2)
            << ") of a visible one, overhead "
            << format_seconds(calibration.launch_overhead_s) << " per block; backward/forward "
            << format_fixed(calibration.backward_over_forward, 2) << "; merges "
            << format_bytes(calibration.merge_bytes_per_s) << "/s; transfers "
            << (calibration.link_bytes_per_s > 0 ? format_bytes(calibration.link_bytes_per_s) + "/s + " +
                                                       format_seconds(calibration.link_latency_s)
                                                 : std::string("not measurable"));
  if (!calibration.concurrency_speedup.empty()) {
    std::cout << "\nranks sharing a device: throughput of 1.." << calibration.concurrency_speedup.size() << " concurrent blocks";
    for (double speedup : calibration.concurrency_speedup) std::cout << " " << format_fixed(speedup, 2) << "x";
    if (!calibration.devices_speedup.empty()) {
      std::cout << "; of 1.." << calibration.devices_speedup.size() << " busy devices";
      for (double speedup : calibration.devices_speedup) std::cout << " " << format_fixed(speedup, 2) << "x";
    }
    std::cout << "; copies " << (calibration.copy_bytes_per_s > 0 ? format_bytes(calibration.copy_bytes_per_s) + "/s" : std::string("not measurable"));
  }
  const CalibratedSpeedReference& reference = calibration.speed_reference;
  std::cout << "\nspeed reference (validate times it again): a " << reference.side_tokens << "-token forward block in "
            << format_seconds(reference.times.block_s);
  if (reference.devices > 1)
    std::cout << "; a diagonal block on each of " << reference.devices << " devices at once delivers "
              << format_fixed(reference.devices * reference.times.alone_s / reference.times.devices_s, 2) << "x one alone";
  // Per group: the interquartile range, which the lower quartiles and medians kept are exposed
  // to, and max - min, which one preempted run sets on a shared machine.
  const CalibrationSpread& spread = calibration.spread_by_figure;
  auto group = [](const std::string& name, const FigureSpread& figure) {
    return name + " " + format_fixed(100 * figure.interquartile, 1) + " % (" + format_fixed(100 * figure.full_range, 1) + " %)";
  };
  std::cout << "\nspread over at least " << flags.repeats
            << " repeats, interquartile range (max - min) over the median: " << group("blocks", spread.blocks) << ", "
            << group("merges", spread.merges);
  if (!calibration.devices_speedup.empty()) std::cout << ", " << group("busy devices", spread.busy_devices);
  if (!calibration.concurrency_speedup.empty()) std::cout << ", " << group("concurrency", spread.concurrency);
  if (calibration.block_timing_spreads.size() > 1) {
    std::cout << "\nblocks timed " << calibration.block_timing_spreads.size() << " times, interquartile spread";
    const char* separator = " ";
    for (double spread_seen : calibration.block_timing_spreads) {
      std::cout << separator << format_fixed(100 * spread_seen, 1) << " %";
      separator = ", ";
    }
    std::cout << " (at most " << format_fixed(flags.max_block_spread_percent, 1) << " % wanted); the steadiest kept";
  }
  std::cout << "\nwrote " << flags.calibration << "\n";
  return 0;
}

}  // namespace

int run_execute(const ProblemFlags& problem, const ScheduleFlags& schedule, const RunFlags& flags, const CommonFlags& common) {
  try {
    return execute_and_compare(problem, schedule, flags, common);
  } catch (const backend::BackendUnavailable& error) {
    return unavailable(error);
  }
}

int run_validate(const ProblemFlags& problem, const ScheduleFlags& schedule, const HardwareFlags& hardware,
                 const NetworkFlags& network, const RunFlags& flags, const CommonFlags& common) {
  try {
    return execute_and_predict(problem, schedule, hardware, network, flags, common);
  } catch (const backend::BackendUnavailable& error) {
    return unavailable(error);
  }
}

int run_calibrate(const ProblemFlags& problem, const RunFlags& flags) {
  try {
    return calibrate(problem, flags);
  } catch (const backend::BackendUnavailable& error) {
    return unavailable(error);
  }
}

}  // namespace tessera::cli
