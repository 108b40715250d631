#include "tessera/backend/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "tessera/backend/reference.hpp"
#include "tessera/core/data_size.hpp"
#include "tessera/core/schedule.hpp"
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

double wall_seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int timed_runs(const TimingBudget& budget, double op_s, double wall_s, int repeats) {
  if (!(op_s > 0)) return repeats;
  double wanted = std::min(static_cast<double>(budget.most), std::ceil(budget.timed_s / op_s));
  if (wall_s > 0) wanted = std::min(wanted, std::ceil(budget.wall_cap_s / wall_s));
  return std::max(repeats, static_cast<int>(wanted));
}

FigureSpread spread_of(std::vector<double> values) {
  if (values.size() < 2) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double middle = values[n / 2];
  if (middle <= 0) return {};
  // The quartiles as lower_quartile picks them: the values a quarter of the way in from each end.
  return FigureSpread{(values[n - 1 - n / 4] - values[n / 4]) / middle, (values.back() - values.front()) / middle};
}

namespace {

// The widest of each kind of spread over the figures of a group.
void widen(FigureSpread& group, const FigureSpread& figure) {
  group.interquartile = std::max(group.interquartile, figure.interquartile);
  group.full_range = std::max(group.full_range, figure.full_range);
}

// A checked schedule to time, with inputs (and, for backward passes, a forward's O and LSE: any
// consistent values do for timing).
struct TimingRun {
  schedules::CheckedSchedule checked;
  AttentionTensors inputs;
};

TimingRun with_inputs(const ScheduleExecutor& executor, schedules::CheckedSchedule checked) {
  TimingRun run{std::move(checked), {}};
  require_ready(executor.can_run(run.checked));
  run.inputs = random_inputs(run.checked.schedule().problem, 7);
  return run;
}

// The forward's O and LSE for a backward run's inputs, from the executor itself: the same ring
// run forward. The host's dense reference would do as well, but at a GPU's block sides it is
// the host's longest work: 2.7e11 FLOP for a 4K-token block of 32 heads of 128, against a
// fraction of a millisecond on the GPU.
void add_forward_results(ScheduleExecutor& executor, TimingRun& run, const schedules::GeneratorOptions& options) {
  Problem forward_problem = run.checked.schedule().problem;
  forward_problem.pass = Pass::forward;
  const schedules::CheckedSchedule forward = schedules::generate_checked("ring", forward_problem, options);
  require_ready(executor.can_run(forward));
  AttentionTensors tensors = run.inputs;
  ExecutionRecord record;
  executor.execute(forward, tensors, record);
  run.inputs.out = std::move(tensors.out);
  run.inputs.lse = std::move(tensors.lse);
}

// A ring schedule over `side` tokens on `ranks` ranks with the mask `mask` (full: full blocks;
// causal on one rank: the diagonal block).
TimingRun timing_run(ScheduleExecutor& executor, Problem problem, int64_t side, int32_t ranks, Pass pass,
                     MaskKind mask = MaskKind::full) {
  problem.seq_len = side;
  problem.mask = Mask{};
  problem.mask.kind = mask;
  problem.pass = pass;
  schedules::GeneratorOptions options;
  options.gpus = ranks;
  TimingRun run = with_inputs(executor, schedules::generate_checked("ring", problem, options));
  if (pass == Pass::backward) add_forward_results(executor, run, options);
  return run;
}

// The ranks' compute ops are all there is: run on one device, no copies, merges or waits are
// charged to compute.
TimingRun independent_blocks_run(ScheduleExecutor& executor, const Problem& problem, int64_t side, int32_t ranks) {
  return with_inputs(executor, independent_blocks(problem, side, ranks));
}

// The summed time of the ops of one kind in one run of `run`.
double op_time(ScheduleExecutor& executor, const TimingRun& run, OpKind kind) {
  AttentionTensors tensors = run.inputs;
  ExecutionRecord record;
  executor.execute(run.checked, tensors, record);
  const Schedule& schedule = run.checked.schedule();
  double seconds = 0;
  for (size_t index = 0; index < schedule.ops.size(); ++index)
    if (schedule.ops[index].kind == kind) seconds += record.op_finish_s[index] - record.op_start_s[index];
  return seconds;
}

// Median over the timed runs (after one warm-up) of the summed time of the ops of one kind.
double median_op_time(ScheduleExecutor& executor, const TimingRun& run, OpKind kind, int repeats, FigureSpread& spread) {
  const double started_s = wall_seconds_now();
  const double warm_up_s = op_time(executor, run, kind);  // the first run warms caches (and the GPU)
  repeats = timed_runs({}, warm_up_s, wall_seconds_now() - started_s, repeats);
  std::vector<double> times;
  for (int repeat = 0; repeat < repeats; ++repeat) times.push_back(op_time(executor, run, kind));
  widen(spread, spread_of(times));
  return median(times);
}

// The compute op of one-rank schedules over one block of each side: full and diagonal (of a
// causal mask), forward and backward. Timed in passes, each running every side's four blocks once
// (after one warm-up pass), so that a slow spell of the machine (another process, a neighbour on
// the host) falls on every side and kind alike rather than on the ones timed during it; passes go
// on until `repeats` of them and a second of timing (at most 200, and at most 10 s of wall-clock
// time: timed_runs). Each figure is the lower quartile of its runs.
double makespan_of_run(ScheduleExecutor& executor, const TimingRun& run);
bool on_own_devices(const ScheduleExecutor& executor, int32_t ranks);

// The speed reference's runs: its block (one rank), and where it has several devices, one block
// alone and one on each device at once.
struct ReferenceRuns {
  std::vector<TimingRun> runs;  // block; alone, devices
  std::vector<std::vector<double>> times;
  void time_once(ScheduleExecutor& executor) {
    times.resize(runs.size());
    times[0].push_back(op_time(executor, runs[0], OpKind::compute));
    for (size_t index = 1; index < runs.size(); ++index) times[index].push_back(makespan_of_run(executor, runs[index]));
  }
};

Problem reference_problem(const CalibratedSpeedReference& reference) {
  Problem problem;
  problem.heads = reference.heads;
  problem.kv_heads = reference.heads;
  problem.head_dim = reference.head_dim;
  problem.head_dim_v = reference.head_dim;
  problem.dtype = parse_dtype(reference.dtype);
  return problem;
}

ReferenceRuns reference_runs(ScheduleExecutor& executor, const CalibratedSpeedReference& reference) {
  const Problem problem = reference_problem(reference);
  ReferenceRuns runs;
  runs.runs.push_back(timing_run(executor, problem, reference.side_tokens, 1, Pass::forward));
  if (reference.devices > 1 && on_own_devices(executor, reference.devices)) {
    runs.runs.push_back(independent_blocks_run(executor, problem, reference.side_tokens, 1));
    runs.runs.push_back(independent_blocks_run(executor, problem, reference.side_tokens, reference.devices));
  }
  return runs;
}

SpeedReferenceTimes reference_times(const ReferenceRuns& runs) {
  SpeedReferenceTimes times;
  times.block_s = lower_quartile(runs.times[0]);
  if (runs.times.size() == 3) {
    times.alone_s = lower_quartile(runs.times[1]);
    times.devices_s = lower_quartile(runs.times[2]);
  }
  return times;
}

void time_blocks(ScheduleExecutor& executor, const Problem& problem, std::vector<BlockMeasurement>& blocks, int repeats,
                 CalibratedSpeedReference& reference, FigureSpread& spread) {
  ReferenceRuns reference_set = reference_runs(executor, reference);
  std::vector<TimingRun> runs;
  for (const BlockMeasurement& block : blocks) {
    const int64_t side = block.side_tokens;
    runs.push_back(timing_run(executor, problem, side, 1, Pass::forward));
    runs.push_back(timing_run(executor, problem, side, 1, Pass::backward));
    runs.push_back(timing_run(executor, problem, side, 1, Pass::forward, MaskKind::causal));
    runs.push_back(timing_run(executor, problem, side, 1, Pass::backward, MaskKind::causal));
  }
  double pass_s = 0;
  const double started_s = wall_seconds_now();
  for (const TimingRun& run : runs) pass_s += op_time(executor, run, OpKind::compute);
  reference_set.time_once(executor);  // its warm-up
  reference_set.times.assign(reference_set.runs.size(), {});
  const int passes = timed_runs({1.0, 200, 10.0}, std::max(pass_s, 1e-9), wall_seconds_now() - started_s, repeats);
  std::vector<std::vector<double>> times(runs.size());
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t index = 0; index < runs.size(); ++index) times[index].push_back(op_time(executor, runs[index], OpKind::compute));
    reference_set.time_once(executor);
  }
  reference.times = reference_times(reference_set);
  if (reference_set.runs.size() < 3) reference.devices = 1;
  for (const auto& figure : times) widen(spread, spread_of(figure));
  for (size_t block = 0; block < blocks.size(); ++block) {
    blocks[block].forward_s = lower_quartile(times[4 * block]);
    blocks[block].backward_s = lower_quartile(times[4 * block + 1]);
    blocks[block].diagonal_forward_s = lower_quartile(times[4 * block + 2]);
    blocks[block].diagonal_backward_s = lower_quartile(times[4 * block + 3]);
  }
}

// Merges of a 4-rank ring backward over `side` tokens (the key/value gradients come home): the
// bytes the simulator's merge model charges (3 x the partials' bytes) over the measured time.
double merge_rate(ScheduleExecutor& executor, const Problem& problem, int64_t side, int repeats, FigureSpread& spread) {
  const TimingRun run = timing_run(executor, problem, side, 4, Pass::backward);
  const Schedule& schedule = run.checked.schedule();
  double bytes = 0;
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::merge)
      for (const DataItem& item : schedule.items_of(op))
        bytes += 3.0 * static_cast<double>(item_bytes(schedule, run.checked.grid(), item));
  const double seconds = median_op_time(executor, run, OpKind::merge, repeats, spread);
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

// Whether `executor` puts `ranks` ranks on as many devices.
bool on_own_devices(const ScheduleExecutor& executor, int32_t ranks) {
  std::vector<int32_t> devices = executor.planned_devices(ranks);
  std::sort(devices.begin(), devices.end());
  return static_cast<int32_t>(devices.size()) == ranks && std::unique(devices.begin(), devices.end()) - devices.begin() == ranks;
}

// From the first op's start to the last op's finish: the executor's set-up (rounding inputs,
// starting threads) is no part of what the ops cost.
double makespan_of_run(ScheduleExecutor& executor, const TimingRun& run) {
  AttentionTensors tensors = run.inputs;
  ExecutionRecord record;
  executor.execute(run.checked, tensors, record);
  const double first_start_s = *std::min_element(record.op_start_s.begin(), record.op_start_s.end());
  return record.makespan_s - first_start_s;
}

// The throughput of `many` (k ranks, one block each) over that of `one` (one rank, one such
// block): k x one's makespan / many's. Each timed repeat runs both, one after the other, so that
// a slow spell of the machine falls on both; the figure is the median of the repeats' ratios.
double median_speedup(ScheduleExecutor& one_executor, const TimingRun& one, ScheduleExecutor& many_executor,
                      const TimingRun& many, int k, int repeats, FigureSpread& spread) {
  std::vector<double> ratios;
  for (int repeat = 0; repeat < repeats + 1; ++repeat) {
    const double started_s = wall_seconds_now();
    const double one_s = makespan_of_run(one_executor, one);
    const double many_s = makespan_of_run(many_executor, many);
    if (repeat == 0) repeats = timed_runs({}, many_s, wall_seconds_now() - started_s, repeats);  // the first pair warms up
    else if (many_s > 0) ratios.push_back(static_cast<double>(k) * one_s / many_s);
  }
  widen(spread, spread_of(ratios));
  return median(ratios);
}

}  // namespace

double lower_quartile(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 4];
}

schedules::CheckedSchedule independent_blocks(Problem problem, int64_t side, int32_t ranks) {
  problem.seq_len = side * ranks;
  problem.mask = Mask{};
  problem.mask.kind = MaskKind::documents;
  problem.mask.document_lengths.assign(static_cast<size_t>(ranks), side);
  problem.pass = Pass::forward;
  ScheduleBuilder builder("independent blocks", "", problem, Layout::contiguous, ranks);
  const int32_t stream = builder.stream("compute");
  for (int32_t rank = 0; rank < ranks; ++rank) builder.compute(rank, Pass::forward, BlockRef{0, rank, rank}, stream);
  return schedules::check(builder.finish());
}

CalibratedSpeedReference speed_reference_workload(const ScheduleExecutor& executor, const Problem& shape, int64_t side) {
  CalibratedSpeedReference reference;
  reference.side_tokens = side;
  reference.heads = shape.heads;
  reference.head_dim = shape.head_dim;
  reference.dtype = to_string(shape.dtype);
  int32_t devices = 1;
  while (devices < 16 && on_own_devices(executor, devices + 1)) ++devices;
  reference.devices = devices;
  return reference;
}

SpeedReferenceTimes time_speed_reference(ScheduleExecutor& executor, const CalibratedSpeedReference& reference, int repeats) {
  ReferenceRuns runs = reference_runs(executor, reference);
  const double started_s = wall_seconds_now();
  runs.time_once(executor);  // warm-up
  const double wall_s = wall_seconds_now() - started_s;
  double pass_s = 0;
  for (const auto& figure : runs.times) pass_s += figure.front();
  runs.times.assign(runs.runs.size(), {});
  const int passes = timed_runs({0.2, 100, 5.0}, std::max(pass_s, 1e-9), wall_s, repeats);
  for (int pass = 0; pass < passes; ++pass) runs.time_once(executor);
  return reference_times(runs);
}

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

namespace {

// The least-squares p of rows . p = times, each equation divided by its time so that relative
// errors count: block times span orders of magnitude, and unweighted, the largest block would
// decide everything. Normal equations, Gaussian elimination with partial pivoting.
std::vector<double> relative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& times) {
  const size_t n = rows.front().size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0));
  std::vector<double> v(n, 0);
  for (size_t row = 0; row < rows.size(); ++row) {
    const double weight = 1 / times[row];
    for (size_t i = 0; i < n; ++i) {
      v[i] += weight * rows[row][i];  // (weight x_i) (weight t)
      for (size_t j = 0; j < n; ++j) m[i][j] += weight * weight * rows[row][i] * rows[row][j];
    }
  }
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row)
      if (std::abs(m[row][col]) > std::abs(m[pivot][col])) pivot = row;
    std::swap(m[col], m[pivot]);
    std::swap(v[col], v[pivot]);
    if (std::abs(m[col][col]) < 1e-300) throw std::runtime_error("calibration: the block times do not determine the model");
    for (size_t row = col + 1; row < n; ++row) {
      const double factor = m[row][col] / m[col][col];
      for (size_t j = col; j < n; ++j) m[row][j] -= factor * m[col][j];
      v[row] -= factor * v[col];
    }
  }
  std::vector<double> solution(n, 0);
  for (size_t row = n; row-- > 0;) {
    double sum = v[row];
    for (size_t j = row + 1; j < n; ++j) sum -= m[row][j] * solution[j];
    solution[row] = sum / m[row][row];
  }
  return solution;
}

// The relative least-squares p with p[i] >= 0 for every i >= 1 (p[0], the time per FLOP, is
// left free and checked by the caller). A term that the unconstrained fit puts below zero
// cannot be clamped to zero afterwards: the others were fitted to lean on it. One calibration
// on this two-core VM fitted an overhead of -64 us per block with a half efficiency of 6.5
// tokens; clamped to 0 us, the model took its own 64-token blocks 9.6 % (full) and 14.6 %
// (diagonal) slower than measured, while every block's rate was flat within 2.5 %. So every
// subset of the constrained terms is fitted with the rest held at zero (at most 2^3 small
// solves), and the best fit whose terms are all non-negative wins: the exact non-negative
// least-squares answer for so few terms.
std::vector<double> nonnegative_relative_least_squares(const std::vector<std::vector<double>>& rows,
                                                       const std::vector<double>& times) {
  const size_t n = rows.front().size();
  std::vector<double> best;
  double best_error = std::numeric_limits<double>::infinity();
  for (uint32_t kept = 0; kept < (1u << (n - 1)); ++kept) {
    std::vector<size_t> columns{0};
    for (size_t column = 1; column < n; ++column)
      if (kept & (1u << (column - 1))) columns.push_back(column);
    std::vector<std::vector<double>> sub_rows;
    for (const auto& row : rows) {
      std::vector<double> sub;
      for (size_t column : columns) sub.push_back(row[column]);
      sub_rows.push_back(std::move(sub));
    }
    std::vector<double> solution;
    try {
      solution = relative_least_squares(sub_rows, times);
    } catch (const std::runtime_error&) {
      continue;  // these terms alone do not determine a fit
    }
    if (std::any_of(solution.begin() + 1, solution.end(), [](double term) { return term < 0; })) continue;
    std::vector<double> full(n, 0);
    for (size_t index = 0; index < columns.size(); ++index) full[columns[index]] = solution[index];
    double error = 0;
    for (size_t row = 0; row < rows.size(); ++row) {
      double modelled = 0;
      for (size_t column = 0; column < n; ++column) modelled += rows[row][column] * full[column];
      const double relative = (modelled - times[row]) / times[row];
      error += relative * relative;
    }
    if (error < best_error) {
      best_error = error;
      best = std::move(full);
    }
  }
  if (best.empty()) throw std::runtime_error("calibration: the block times do not determine the model");
  return best;
}

// FLOPs of a block's visible and masked pairs: all of them for a full block, the diagonal
// block's side (side + 1) / 2 visible and side (side - 1) / 2 masked ones of a causal mask.
struct BlockFlops {
  double visible, masked, area, side;
};
BlockFlops full_flops(const BlockMeasurement& block, double scale) {
  const double area = scale * block.flops;
  return {area, 0, area, static_cast<double>(block.side_tokens)};
}
BlockFlops diagonal_flops(const BlockMeasurement& block, double scale) {
  const double area = scale * block.flops, side = static_cast<double>(block.side_tokens);
  return {area * (side + 1) / (2 * side), area * (side - 1) / (2 * side), area, side};
}

}  // namespace

ComputeFit fit_compute_model(const std::vector<BlockMeasurement>& blocks) {
  // Forward: t = F(visible) / R + mu F(masked) / R + F(area) half / (R side) + overhead, linear
  // in (1/R, mu/R, half/R, overhead); without diagonal blocks mu is not measured (0).
  const bool diagonals = std::all_of(blocks.begin(), blocks.end(), [](const auto& block) { return block.diagonal_forward_s > 0; });
  std::vector<std::vector<double>> rows;
  std::vector<double> times;
  auto add = [&](const BlockFlops& f, double seconds) {
    rows.push_back(diagonals ? std::vector<double>{f.visible, f.masked, f.area / f.side, 1}
                             : std::vector<double>{f.visible, f.area / f.side, 1});
    times.push_back(seconds);
  };
  for (const auto& block : blocks) {
    add(full_flops(block, 1), block.forward_s);
    if (diagonals) add(diagonal_flops(block, 1), block.diagonal_forward_s);
  }
  const std::vector<double> p = nonnegative_relative_least_squares(rows, times);
  double a = p[0];
  const double mu_a = diagonals ? p[1] : 0, b = p[diagonals ? 2 : 1], c = p[diagonals ? 3 : 2];
  ComputeFit fit;
  if (!(a > 0)) {
    // Degenerate (noise): fall back to the largest block's rate with no size effect.
    const auto& largest = *std::max_element(blocks.begin(), blocks.end(),
                                            [](const auto& x, const auto& y) { return x.side_tokens < y.side_tokens; });
    a = largest.forward_s / largest.flops;
    fit.rate_flops_per_s = 1 / a;
    return fit;
  }
  fit.rate_flops_per_s = 1 / a;
  fit.masked_pair_cost = std::max(0.0, mu_a / a);
  fit.half_efficiency_tokens = std::max(0.0, b / a);
  fit.overhead_s = std::max(0.0, c);
  // Backward: the same overhead, its own rate (R x ratio, FLOPs 2.5x forward's), masked cost and
  // per-row work: t - overhead = [F(visible) + mu' F(masked) + F(area) half' / side] / (R ratio),
  // linear in (1/ratio, mu'/ratio, half'/ratio) (without diagonal blocks, mu' is not fitted).
  const bool backward = std::all_of(blocks.begin(), blocks.end(), [](const auto& block) { return block.backward_s > 0; });
  if (!backward) return fit;
  const bool backward_diagonals =
      std::all_of(blocks.begin(), blocks.end(), [](const auto& block) { return block.diagonal_backward_s > 0; });
  rows.clear();
  times.clear();
  auto add_backward = [&](const BlockFlops& f, double seconds) {
    const double r = fit.rate_flops_per_s;
    rows.push_back(backward_diagonals ? std::vector<double>{f.visible / r, f.masked / r, f.area / f.side / r}
                                      : std::vector<double>{f.visible / r, f.area / f.side / r});
    // Floored at a tenth of the time: an overhead close to a block's whole time leaves noise.
    times.push_back(std::max(seconds - fit.overhead_s, 0.1 * seconds));
  };
  for (const auto& block : blocks) {
    add_backward(full_flops(block, 2.5), block.backward_s);
    if (backward_diagonals) add_backward(diagonal_flops(block, 2.5), block.diagonal_backward_s);
  }
  const std::vector<double> q = nonnegative_relative_least_squares(rows, times);
  if (q[0] > 0) {
    fit.backward_rate_ratio = 1 / q[0];
    fit.backward_masked_pair_cost = backward_diagonals ? std::max(0.0, q[1] / q[0]) : 0;
    fit.backward_half_efficiency_tokens = std::max(0.0, q[backward_diagonals ? 2 : 1] / q[0]);
  }
  return fit;
}

ComputeCalibration calibrate_compute(ScheduleExecutor& executor, const Problem& shape, const std::vector<int64_t>& sides,
                                     int repeats, const CalibrationProgress& progress, ScheduleExecutor* one_device,
                                     int max_concurrency, const BlockRetiming& retiming, int64_t concurrency_side_tokens) {
  if (sides.size() < 3) throw UserError("calibration needs at least three block sizes");
  if (concurrency_side_tokens < 0)
    throw UserError("the concurrency curve's block side must be positive (0: the middle side), got " +
                    std::to_string(concurrency_side_tokens));
  if (retiming.attempts < 1) throw UserError("calibration needs at least one timing of the blocks");
  // Every side's tensors must fit before the first is timed (tensors.hpp).
  std::vector<int64_t> every_side = sides;
  if (concurrency_side_tokens > 0) every_side.push_back(concurrency_side_tokens);
  for (int64_t side : every_side) {
    Problem sized = shape;
    sized.seq_len = side;
    try {
      require_host_tensor_memory(sized);
    } catch (const UserError& refusal) {
      throw UserError("--sides: a block of " + std::to_string(side) + " tokens: " + refusal.what());
    }
  }
  ComputeCalibration calibration;
  const int64_t heads = shape.heads;
  // Steps: each side's blocks, the merges, each side's transfers, each number of busy devices
  // beyond one, and with one device each concurrency level and the copies.
  // n = 2, 3, ... busy devices while the executor puts n ranks on n devices, up to 16 (beyond
  // the curve the simulator goes on at its last average, shared_devices.hpp).
  int32_t device_levels = 0;
  while (device_levels < 15 && on_own_devices(executor, device_levels + 2)) ++device_levels;
  const int total = 2 * static_cast<int>(sides.size()) + 1 + device_levels + (one_device ? max_concurrency + 1 : 0);
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
    calibration.blocks.push_back(block);
  }
  // The diagonal blocks say what masked pairs cost. Timed again while unsteady (BlockRetiming),
  // the steadiest timing kept with the speed reference of the same passes.
  const CalibratedSpeedReference workload = speed_reference_workload(executor, shape, sides[sides.size() / 2]);
  const std::vector<BlockMeasurement> untimed = calibration.blocks;
  for (int attempt = 0; attempt < retiming.attempts; ++attempt) {
    // Said before the blocks' timing, the longest step, which reports only when done: on a GPU
    // it is minutes of the host's work, and a calibration that printed nothing for them looked
    // hung.
    if (progress) {
      std::string line = "timing the blocks (" + std::to_string(sides.size()) + " sides, full and diagonal, forward and backward)";
      if (attempt > 0) {
        char spread_text[32];
        std::snprintf(spread_text, sizeof spread_text, "%.1f %%", 100 * calibration.block_timing_spreads.back());
        line += ", again (" + std::to_string(attempt + 1) + " of at most " + std::to_string(retiming.attempts) +
                "): their widest interquartile range was " + spread_text;
      }
      progress(done, total, line);
    }
    std::vector<BlockMeasurement> blocks = untimed;
    CalibratedSpeedReference reference = workload;
    FigureSpread spread;
    time_blocks(executor, shape, blocks, repeats, reference, spread);
    calibration.block_timing_spreads.push_back(spread.interquartile);
    if (attempt == 0 || spread.interquartile < calibration.spread_by_figure.blocks.interquartile) {
      calibration.blocks = std::move(blocks);
      calibration.speed_reference = reference;
      calibration.spread_by_figure.blocks = spread;
    }
    if (spread.interquartile <= retiming.max_interquartile) break;
  }
  for (const BlockMeasurement& block : calibration.blocks) {
    const int64_t side = block.side_tokens;
    step("block " + std::to_string(side) + "x" + std::to_string(side) + ": forward " + std::to_string(block.forward_s * 1e3) +
         " ms, backward " + std::to_string(block.backward_s * 1e3) + " ms; diagonal " +
         std::to_string(block.diagonal_forward_s * 1e3) + " ms, " + std::to_string(block.diagonal_backward_s * 1e3) + " ms");
  }
  const ComputeFit fit = fit_compute_model(calibration.blocks);
  calibration.peak_flops_per_s = fit.rate_flops_per_s;
  // The file wants a half efficiency above 0; a thousandth of a token is none (a 64-token block
  // at 1 - 1.6e-5 of the rate), where the former floor of one token charged 64-token blocks 1.6 %
  // that no timing showed.
  calibration.half_efficiency_tokens = std::max(1e-3, fit.half_efficiency_tokens);
  calibration.launch_overhead_s = std::max(1e-9, fit.overhead_s);
  calibration.masked_pair_cost = fit.masked_pair_cost;
  calibration.backward_masked_pair_cost = fit.backward_masked_pair_cost;
  calibration.backward_half_efficiency_tokens = fit.backward_half_efficiency_tokens;
  const BlockMeasurement& largest = calibration.blocks.back();
  calibration.backward_over_forward = largest.backward_s / largest.forward_s;
  calibration.largest_block_flops_per_s = largest.flops / largest.forward_s;
  calibration.backward_rate_ratio = fit.backward_rate_ratio;
  calibration.merge_bytes_per_s = merge_rate(executor, shape, largest.side_tokens, repeats,
                                              calibration.spread_by_figure.merges);
  step("merges: " + std::to_string(calibration.merge_bytes_per_s / 1e9) + " GB/s");
  std::vector<std::pair<double, double>> transfers;
  for (int64_t side : sides) {
    auto samples = transfer_times(executor, shape, side, repeats);
    transfers.insert(transfers.end(), samples.begin(), samples.end());
    step("transfers of a " + std::to_string(side) + "-token chunk");
  }
  std::tie(calibration.link_bytes_per_s, calibration.link_latency_s) = fit_link(transfers);
  // Devices sharing the machine: n ranks, each on a device of its own (where the executor puts
  // them so) and each computing one block, against one such block alone. CPU cores may share a
  // physical core (SMT), its caches, memory bandwidth or power budget, so that two busy cores
  // deliver less than twice one's throughput.
  const int64_t middle_side = sides[sides.size() / 2];
  if (device_levels > 0) {
    const TimingRun alone = independent_blocks_run(executor, shape, middle_side, 1);
    calibration.devices_speedup.push_back(1);
    for (int32_t n = 2; n <= device_levels + 1; ++n) {
      const double speedup =
          median_speedup(executor, alone, executor, independent_blocks_run(executor, shape, middle_side, n), n, repeats,
                         calibration.spread_by_figure.busy_devices);
      // n devices deliver at most n times one's throughput: a figure above it is a slow spell
      // of the machine during the runs alone, and would have the simulator run ranks faster
      // than their devices can.
      calibration.devices_speedup.push_back(std::clamp(speedup, 1e-3, static_cast<double>(n)));
      step("devices " + std::to_string(n) + " busy: " + std::to_string(speedup) + "x one device's throughput");
    }
  }
  if (one_device) {
    // The concurrency curve: k ranks on one device, each computing one block of its own and
    // nothing else (no copies, merges or waits: the simulator charges those apart), against one
    // such block alone. By default the middle side: large enough that a block's own overhead is
    // small, small enough that a few of them stay quick.
    const int64_t side = concurrency_side_tokens > 0 ? concurrency_side_tokens : sides[sides.size() / 2];
    calibration.concurrency_side_tokens = side;
    const TimingRun alone = independent_blocks_run(*one_device, shape, side, 1);
    calibration.concurrency_speedup.push_back(1);
    step("concurrency 1: one " + std::to_string(side) + "-token block");
    for (int k = 2; k <= max_concurrency; ++k) {
      const double speedup =
          median_speedup(*one_device, alone, *one_device, independent_blocks_run(*one_device, shape, side, k), k, repeats,
                         calibration.spread_by_figure.concurrency);
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
  const CalibrationSpread& spread = calibration.spread_by_figure;
  calibration.spread = std::max({spread.blocks.full_range, spread.merges.full_range, spread.busy_devices.full_range,
                                 spread.concurrency.full_range});
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
  // Measured on diagonal blocks: a file without them keeps the visible-pairs model.
  if (std::all_of(calibration.blocks.begin(), calibration.blocks.end(), [](const auto& block) { return block.diagonal_forward_s > 0; }))
    file.block_model = CalibratedBlockModel{calibration.masked_pair_cost, calibration.backward_masked_pair_cost,
                                            calibration.backward_half_efficiency_tokens};
  if (calibration.speed_reference.times.block_s > 0) file.speed_reference = calibration.speed_reference;
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
  measured.spread_by_figure = calibration.spread_by_figure;
  measured.block_timing_spreads = calibration.block_timing_spreads;
  measured.concurrency_side_tokens = calibration.concurrency_side_tokens;
  file.measured = measured;
  if (!calibration.concurrency_speedup.empty() || !calibration.devices_speedup.empty() || calibration.copy_bytes_per_s > 0) {
    CalibratedSharing sharing;
    sharing.concurrency_speedup = calibration.concurrency_speedup;
    sharing.devices_speedup = calibration.devices_speedup;
    // Within the file's range (1e6 to 1e15 B/s), or left out: a copy too fast to time is free.
    if (calibration.copy_bytes_per_s >= 1e6 && calibration.copy_bytes_per_s <= 1e15) sharing.copy_bytes_per_s = calibration.copy_bytes_per_s;
    file.sharing = sharing;
  }
  return file;
}

}  // namespace tessera::backend
