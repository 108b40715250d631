#include "tessera/backend/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "tessera/backend/reference.hpp"
#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera::backend {

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// (max - min) / median of repeated timings: how far one figure moved between repeats.
double spread_of(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const double middle = median(values);
  return middle > 0 ? (*high - *low) / middle : 0;
}

// The calibration's repeatability so far: the widest spread of any figure.
thread_local double widest_spread = 0;

// A checked ring schedule of full blocks over `side` tokens on `ranks` ranks, with inputs (and,
// for backward passes, a forward's O and LSE: any consistent values do for timing).
struct TimingRun {
  schedules::CheckedSchedule checked;
  AttentionTensors inputs;
};

TimingRun timing_run(const ScheduleExecutor& executor, Problem problem, int64_t side, int32_t ranks, Pass pass) {
  problem.seq_len = side;
  problem.mask = Mask{};
  problem.mask.kind = MaskKind::full;
  problem.pass = pass;
  schedules::GeneratorOptions options;
  options.gpus = ranks;
  TimingRun run{schedules::generate_checked("ring", problem, options), {}};
  require_ready(executor.can_run(run.checked));
  const Problem& generated = run.checked.schedule().problem;
  run.inputs = random_inputs(generated, 7);
  if (pass == Pass::backward) {
    AttentionTensors forward = run.inputs;
    Problem forward_problem = generated;
    forward_problem.pass = Pass::forward;
    dense_attention(forward_problem, forward, false);
    run.inputs.out = forward.out;
    run.inputs.lse = forward.lse;
  }
  return run;
}

// Median over `repeats` runs (after one warm-up) of the summed time of the ops of one kind.
double median_op_time(ScheduleExecutor& executor, const TimingRun& run, OpKind kind, int repeats) {
  std::vector<double> times;
  for (int repeat = 0; repeat < repeats + 1; ++repeat) {
    AttentionTensors tensors = run.inputs;
    ExecutionRecord record;
    executor.execute(run.checked, tensors, record);
    const Schedule& schedule = run.checked.schedule();
    double seconds = 0;
    for (size_t index = 0; index < schedule.ops.size(); ++index)
      if (schedule.ops[index].kind == kind) seconds += record.op_finish_s[index] - record.op_start_s[index];
    if (repeat > 0) times.push_back(seconds);  // the first run warms caches (and the GPU)
  }
  widest_spread = std::max(widest_spread, spread_of(times));
  return median(times);
}

// Median time of the compute op of a one-rank schedule over one full block of `side` tokens.
double time_block(ScheduleExecutor& executor, const Problem& problem, int64_t side, Pass pass, int repeats) {
  return median_op_time(executor, timing_run(executor, problem, side, 1, pass), OpKind::compute, repeats);
}

// Merges of a 4-rank ring backward over `side` tokens (the key/value gradients come home): the
// bytes the simulator's merge model charges (3 x the partials' bytes) over the measured time.
double merge_rate(ScheduleExecutor& executor, const Problem& problem, int64_t side, int repeats) {
  const TimingRun run = timing_run(executor, problem, side, 4, Pass::backward);
  const Schedule& schedule = run.checked.schedule();
  double bytes = 0;
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::merge)
      for (const DataItem& item : schedule.items_of(op))
        bytes += 3.0 * static_cast<double>(item_bytes(schedule, run.checked.grid(), item));
  const double seconds = median_op_time(executor, run, OpKind::merge, repeats);
  return seconds > 0 ? bytes / seconds : 0;
}

// Transfer service times of a 2-rank ring forward over 2 x side tokens: (bytes, seconds) of
// each KV transfer, timed from the later of its send's and recv's starts.
std::vector<std::pair<double, double>> transfer_times(ScheduleExecutor& executor, const Problem& problem, int64_t side,
                                                      int repeats) {
  const TimingRun run = timing_run(executor, problem, 2 * side, 2, Pass::forward);
  const Schedule& schedule = run.checked.schedule();
  std::vector<std::pair<double, double>> samples;
  for (int repeat = 0; repeat < repeats + 1; ++repeat) {
    AttentionTensors tensors = run.inputs;
    ExecutionRecord record;
    executor.execute(run.checked, tensors, record);
    if (repeat == 0) continue;
    for (size_t index = 0; index < schedule.ops.size(); ++index) {
      const Op& op = schedule.ops[index];
      if (op.kind != OpKind::recv) continue;
      double bytes = 0;
      for (const DataItem& item : schedule.items_of(op)) bytes += static_cast<double>(item_bytes(schedule, run.checked.grid(), item));
      const auto partner = static_cast<size_t>(run.checked.analysis().partner[index]);
      const double begin_s = std::max(record.op_start_s[index], record.op_start_s[partner]);
      samples.emplace_back(bytes, std::max(0.0, record.op_finish_s[index] - begin_s));
    }
  }
  return samples;
}

// Median makespan (after one warm-up) of a run of `run` on `executor`.
double median_makespan(ScheduleExecutor& executor, const TimingRun& run, int repeats) {
  std::vector<double> times;
  for (int repeat = 0; repeat < repeats + 1; ++repeat) {
    AttentionTensors tensors = run.inputs;
    ExecutionRecord record;
    executor.execute(run.checked, tensors, record);
    // From the first op's start: the executor's set-up (rounding inputs, starting threads) is
    // no part of what the ops cost.
    const double first_start_s = *std::min_element(record.op_start_s.begin(), record.op_start_s.end());
    if (repeat > 0) times.push_back(record.makespan_s - first_start_s);
  }
  widest_spread = std::max(widest_spread, spread_of(times));
  return median(times);
}

}  // namespace

std::pair<double, double> fit_link(const std::vector<std::pair<double, double>>& bytes_seconds) {
  const auto n = static_cast<double>(bytes_seconds.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : bytes_seconds) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denominator = n * sxx - sx * sx;
  if (n < 2 || denominator <= 0) return {0, 0};
  const double slope = (n * sxy - sx * sy) / denominator;
  const double intercept = (sy - slope * sx) / n;
  if (!(slope > 0)) return {0, std::max(0.0, sy / n)};
  return {1 / slope, std::max(0.0, intercept)};
}

ComputeFit fit_compute_model(const std::vector<BlockMeasurement>& blocks) {
  // Normal equations for t = a F + b F / side + c, with a = 1/R, b = half/R. Each block's
  // equation is divided by its time, so relative errors count: block times span orders of
  // magnitude, and unweighted, the largest block would decide everything.
  double m[3][3] = {}, v[3] = {};
  for (const auto& block : blocks) {
    const double weight = 1 / block.forward_s;
    const double x[3] = {weight * block.flops, weight * block.flops / static_cast<double>(block.side_tokens), weight};
    for (int i = 0; i < 3; ++i) {
      v[i] += x[i] * weight * block.forward_s;
      for (int j = 0; j < 3; ++j) m[i][j] += x[i] * x[j];
    }
  }
  // Gaussian elimination with partial pivoting (3 x 3).
  int order[3] = {0, 1, 2};
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int row = col + 1; row < 3; ++row)
      if (std::abs(m[row][col]) > std::abs(m[pivot][col])) pivot = row;
    std::swap(m[col], m[pivot]);
    std::swap(v[col], v[pivot]);
    std::swap(order[col], order[pivot]);
    if (std::abs(m[col][col]) < 1e-300) throw std::runtime_error("calibration: the block times do not determine the model");
    for (int row = col + 1; row < 3; ++row) {
      const double factor = m[row][col] / m[col][col];
      for (int j = col; j < 3; ++j) m[row][j] -= factor * m[col][j];
      v[row] -= factor * v[col];
    }
  }
  double solution[3];
  for (int row = 2; row >= 0; --row) {
    double sum = v[row];
    for (int j = row + 1; j < 3; ++j) sum -= m[row][j] * solution[j];
    solution[row] = sum / m[row][row];
  }
  ComputeFit fit;
  double a = solution[0], b = std::max(0.0, solution[1]), c = std::max(0.0, solution[2]);
  if (!(a > 0)) {
    // Degenerate (noise): fall back to the largest block's rate with no size effect.
    const auto& largest = *std::max_element(blocks.begin(), blocks.end(),
                                            [](const auto& x, const auto& y) { return x.side_tokens < y.side_tokens; });
    a = largest.forward_s / largest.flops;
    b = 0;
  }
  fit.rate_flops_per_s = 1 / a;
  fit.half_efficiency_tokens = b / a;
  fit.overhead_s = c;
  return fit;
}

ComputeCalibration calibrate_compute(ScheduleExecutor& executor, const Problem& shape, const std::vector<int64_t>& sides,
                                     int repeats, const CalibrationProgress& progress, ScheduleExecutor* one_device,
                                     int max_concurrency) {
  if (sides.size() < 3) throw UserError("calibration needs at least three block sizes");
  // Every side's tensors must fit before the first is timed (tensors.hpp).
  for (int64_t side : sides) {
    Problem sized = shape;
    sized.seq_len = side;
    try {
      require_host_tensor_memory(sized);
    } catch (const UserError& refusal) {
      throw UserError("--sides: a block of " + std::to_string(side) + " tokens: " + refusal.what());
    }
  }
  ComputeCalibration calibration;
  widest_spread = 0;
  const int64_t heads = shape.heads;
  // Steps: each side's blocks, the merges, each side's transfers, and with one device each
  // concurrency level and the copies.
  const int total = 2 * static_cast<int>(sides.size()) + 1 + (one_device ? max_concurrency + 1 : 0);
  int done = 0;
  auto step = [&](const std::string& line) {
    ++done;
    if (progress) progress(done, total, line);
  };
  for (int64_t side : sides) {
    BlockMeasurement block;
    block.side_tokens = side;
    block.flops = 4.0 * static_cast<double>(side) * static_cast<double>(side) * static_cast<double>(shape.head_dim) *
                  static_cast<double>(heads);
    block.forward_s = time_block(executor, shape, side, Pass::forward, repeats);
    block.backward_s = time_block(executor, shape, side, Pass::backward, repeats);
    calibration.blocks.push_back(block);
    step("block " + std::to_string(side) + "x" + std::to_string(side) + ": forward " + std::to_string(block.forward_s * 1e3) +
         " ms, backward " + std::to_string(block.backward_s * 1e3) + " ms");
  }
  const ComputeFit fit = fit_compute_model(calibration.blocks);
  calibration.peak_flops_per_s = fit.rate_flops_per_s;
  calibration.half_efficiency_tokens = std::max(1.0, fit.half_efficiency_tokens);
  calibration.launch_overhead_s = std::max(1e-9, fit.overhead_s);
  const BlockMeasurement& largest = calibration.blocks.back();
  calibration.backward_over_forward = largest.backward_s / largest.forward_s;
  calibration.largest_block_flops_per_s = largest.flops / largest.forward_s;
  calibration.backward_rate_ratio = 2.5 / calibration.backward_over_forward;
  calibration.merge_bytes_per_s = merge_rate(executor, shape, largest.side_tokens, repeats);
  step("merges: " + std::to_string(calibration.merge_bytes_per_s / 1e9) + " GB/s");
  std::vector<std::pair<double, double>> transfers;
  for (int64_t side : sides) {
    auto samples = transfer_times(executor, shape, side, repeats);
    transfers.insert(transfers.end(), samples.begin(), samples.end());
    step("transfers of a " + std::to_string(side) + "-token chunk");
  }
  std::tie(calibration.link_bytes_per_s, calibration.link_latency_s) = fit_link(transfers);
  if (one_device) {
    // The concurrency curve: k ranks of a forward ring over k x side tokens, all on one device,
    // compute k^2 full blocks; alone each takes the block's time, so the device delivered
    // k^2 x block / makespan blocks' worth per block time. The middle side: large enough that a
    // block's own overhead is small, small enough that 16 of them stay quick.
    const int64_t side = sides[sides.size() / 2];
    const double block_s = median_makespan(*one_device, timing_run(*one_device, shape, side, 1, Pass::forward), repeats);
    calibration.concurrency_speedup.push_back(1);
    step("concurrency 1: one " + std::to_string(side) + "-token block in " + std::to_string(block_s * 1e3) + " ms");
    for (int k = 2; k <= max_concurrency; ++k) {
      const double makespan_s = median_makespan(*one_device, timing_run(*one_device, shape, k * side, k, Pass::forward), repeats);
      const double speedup = static_cast<double>(k * k) * block_s / makespan_s;
      calibration.concurrency_speedup.push_back(std::clamp(speedup, 1e-3, 1e6));
      step("concurrency " + std::to_string(k) + ": " + std::to_string(speedup) + "x one block's throughput");
    }
    // Copies between two ranks on the device: the transfers of a 2-rank ring on it.
    std::vector<std::pair<double, double>> copies;
    for (int64_t copy_side : sides) {
      auto samples = transfer_times(*one_device, shape, copy_side, repeats);
      copies.insert(copies.end(), samples.begin(), samples.end());
    }
    calibration.copy_bytes_per_s = fit_link(copies).first;
    step("copies within a device: " + std::to_string(calibration.copy_bytes_per_s / 1e9) + " GB/s");
  }
  calibration.spread = widest_spread;
  return calibration;
}

CalibrationFile calibration_file(const ComputeCalibration& calibration, const std::string& device, const Problem& shape) {
  CalibrationFile file;
  file.gpu = std::string(kDefaultGpu.name);
  file.device = device;
  (shape.dtype == DType::fp32 ? file.peak_flops_per_s_fp32 : file.peak_flops_per_s_16bit) = calibration.peak_flops_per_s;
  file.max_efficiency = 1.0;  // folded into the fitted rate
  file.half_efficiency_tokens = calibration.half_efficiency_tokens;
  file.launch_overhead_s = calibration.launch_overhead_s;
  file.backward_rate_ratio = calibration.backward_rate_ratio;
  if (calibration.merge_bytes_per_s > 0) file.hbm_bytes_per_s = calibration.merge_bytes_per_s;
  // Not part of the GPU profile: `tessera validate` uses it for its uniform network.
  if (calibration.link_bytes_per_s > 0) file.link = CalibratedLink{calibration.link_bytes_per_s, calibration.link_latency_s};
  CalibrationRecord measured;
  measured.heads = shape.heads;
  measured.head_dim = shape.head_dim;
  measured.dtype = to_string(shape.dtype);
  measured.blocks = calibration.blocks;
  measured.backward_over_forward = calibration.backward_over_forward;
  measured.largest_block_flops_per_s = calibration.largest_block_flops_per_s;
  measured.spread = calibration.spread;
  file.measured = measured;
  if (!calibration.concurrency_speedup.empty() || calibration.copy_bytes_per_s > 0) {
    CalibratedSharing sharing;
    sharing.concurrency_speedup = calibration.concurrency_speedup;
    // Within the file's range (1e6 to 1e15 B/s), or left out: a copy too fast to time is free.
    if (calibration.copy_bytes_per_s >= 1e6 && calibration.copy_bytes_per_s <= 1e15) sharing.copy_bytes_per_s = calibration.copy_bytes_per_s;
    file.sharing = sharing;
  }
  return file;
}

}  // namespace tessera::backend
