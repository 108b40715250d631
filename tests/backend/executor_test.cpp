// The executor interface, the device memory plan and the calibration fit: what the CUDA
// executor relies on, checked on every machine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "tessera/backend/calibration.hpp"
#include "tessera/backend/cpu/cpu_executor.hpp"
#include "tessera/backend/device_buffers.hpp"
#include "tessera/backend/executor.hpp"
#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::backend;
using namespace tessera::schedules;

namespace {
// The CPU executor on one core: the device the concurrency curve's ranks share.
std::unique_ptr<ScheduleExecutor> one_core_executor() {
  ExecutorOptions one_core;
  one_core.devices = 1;
  return make_executor("cpu", one_core);
}

Problem small_problem(Pass pass) {
  Problem problem;
  problem.seq_len = 64;
  problem.heads = 2;
  problem.kv_heads = 2;
  problem.head_dim = 16;
  problem.head_dim_v = 16;
  problem.dtype = DType::bf16;
  problem.mask.kind = MaskKind::full;
  problem.pass = pass;
  return problem;
}
}  // namespace

TEST_CASE("the executor interface runs the CPU executor and records every op", "[backend]") {
  Problem problem = small_problem(Pass::both);
  problem.mask.kind = MaskKind::causal;
  GeneratorOptions options;
  options.gpus = 4;
  const CheckedSchedule checked = generate_checked("mesh", problem, options);
  const Schedule& schedule = checked.schedule();
  AttentionTensors inputs = random_inputs(schedule.problem, 5);
  AttentionTensors reference = inputs;
  dense_attention(schedule.problem, reference, true);
  inputs.out = reference.out;
  inputs.lse = reference.lse;

  AttentionTensors direct = inputs;
  execute_on_cpu(checked, direct);
  auto executor = make_executor("cpu", {});
  REQUIRE(executor->can_run(checked).ok());
  AttentionTensors through = inputs;
  ExecutionRecord record;
  executor->execute(checked, through, record);
  // The same executor through the interface: bit-identical results.
  CHECK(max_abs_error(direct.out, through.out) == 0);
  CHECK(max_abs_error(direct.d_k, through.d_k) == 0);
  REQUIRE(record.op_start_s.size() == schedule.ops.size());
  double latest = 0;
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    CHECK(record.op_start_s[index] <= record.op_finish_s[index]);
    latest = std::max(latest, record.op_finish_s[index]);
  }
  CHECK(record.makespan_s == latest);
  // Each rank a thread: an op starts once everything it depends on has finished (its stream's
  // previous op, its data, a free buffer), and a send finishes with its recv (rendezvous).
  const auto& analysis = checked.analysis();
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    for (uint32_t dep : analysis.deps_of(index)) CHECK(record.op_finish_s[dep] <= record.op_start_s[index]);
    if (analysis.partner[index] >= 0) CHECK(record.op_finish_s[index] == record.op_finish_s[static_cast<size_t>(analysis.partner[index])]);
  }
}

TEST_CASE("make_executor names what is wrong", "[backend]") {
  CHECK_THROWS_AS(make_executor("tpu", {}), UserError);
  CHECK_THROWS_AS(parse_transport("pigeon"), UserError);
  CHECK(parse_transport("nccl") == Transport::nccl);
  CHECK(parse_transport("mpi") == Transport::mpi);
  if (!cuda_executor_built()) CHECK_THROWS_AS(make_executor("cuda", {}), BackendUnavailable);
}

TEST_CASE("device memory plan of a 4-rank ring forward, counted by hand", "[backend]") {
  // N = 64 on 4 ranks: 16 rows a chunk; H = G = 2, d = dv = 16, bf16 inputs, fp32 partials.
  //   Q  = 16 x 2 x 16 x 2 B        = 1024 B
  //   KV = 16 x 2 x (16 + 16) x 2 B = 2048 B  (own chunk + 3 received)
  //   O  = 16 x 2 x (16 + 1) x 4 B  = 2176 B  (O and its LSE, fp32; never leaves its owner)
  Problem problem = small_problem(Pass::forward);
  GeneratorOptions options;
  options.gpus = 4;
  options.layout = Layout::contiguous;
  Schedule schedule = generate_schedule("ring", problem, options);
  BlockGrid grid(schedule.problem, schedule.layout, schedule.chunks());
  DeviceMemoryPlan plan = plan_device_memory(schedule, grid);
  const int64_t per_rank = 1024 + 4 * 2048 + 2176;
  for (int64_t bytes : plan.rank_bytes) CHECK(bytes == per_rank);
  CHECK(plan.total_bytes == 4 * per_rank);
  CHECK(plan.largest_rank_bytes == per_rank);
}

TEST_CASE("the compute model fit recovers known parameters", "[backend][calibration]") {
  // Times made from the model itself: t = F / R x (side + half) / side + overhead.
  const double rate = 4e11, half = 300, overhead = 7e-6;
  std::vector<BlockMeasurement> blocks;
  for (int64_t side : {64, 128, 256, 512, 1024, 2048}) {
    BlockMeasurement block;
    block.side_tokens = side;
    block.flops = 4.0 * side * side * 128 * 8;
    block.forward_s = block.flops / rate * (static_cast<double>(side) + half) / static_cast<double>(side) + overhead;
    blocks.push_back(block);
  }
  ComputeFit fit = fit_compute_model(blocks);
  CHECK(fit.rate_flops_per_s == Approx(rate).epsilon(1e-6));
  CHECK(fit.half_efficiency_tokens == Approx(half).epsilon(1e-6));
  CHECK(fit.overhead_s == Approx(overhead).epsilon(1e-4));
}

TEST_CASE("the compute model fit recovers the masked pair costs and the backward rate from diagonal blocks",
          "[backend][calibration]") {
  // Times made by hand from the model: a block of side s has F = 4 s^2 d H forward FLOPs; its
  // causal diagonal block s (s + 1) / 2 visible pairs and s (s - 1) / 2 masked ones. Forward
  // t = [F_visible + mu F_masked + F half / s] / R + overhead; backward the same with 2.5x the
  // FLOPs, mu' for mu, half' for half and R x rho for R.
  const double rate = 3e9, half = 40, overhead = 20e-6, mu = 0.15, rho = 0.8, mu_back = 0.05, half_back = 6;
  std::vector<BlockMeasurement> blocks;
  for (int64_t side : {64, 128, 256, 512}) {
    const auto s = static_cast<double>(side);
    BlockMeasurement block;
    block.side_tokens = side;
    block.flops = 4.0 * s * s * 32 * 4;
    const double visible = block.flops * (s + 1) / (2 * s), masked = block.flops * (s - 1) / (2 * s);
    const double rows = block.flops * half / s, rows_back = block.flops * half_back / s;
    block.forward_s = (block.flops + rows) / rate + overhead;
    block.backward_s = 2.5 * (block.flops + rows_back) / (rate * rho) + overhead;
    block.diagonal_forward_s = (visible + mu * masked + rows) / rate + overhead;
    block.diagonal_backward_s = 2.5 * (visible + mu_back * masked + rows_back) / (rate * rho) + overhead;
    blocks.push_back(block);
  }
  const ComputeFit fit = fit_compute_model(blocks);
  CHECK(fit.rate_flops_per_s == Approx(rate).epsilon(1e-6));
  CHECK(fit.half_efficiency_tokens == Approx(half).epsilon(1e-6));
  CHECK(fit.overhead_s == Approx(overhead).epsilon(1e-4));
  CHECK(fit.masked_pair_cost == Approx(mu).epsilon(1e-6));
  CHECK(fit.backward_rate_ratio == Approx(rho).epsilon(1e-6));
  CHECK(fit.backward_masked_pair_cost == Approx(mu_back).epsilon(1e-6));
  CHECK(fit.backward_half_efficiency_tokens == Approx(half_back).epsilon(1e-6));
  // Without the diagonal blocks, nothing says what a masked pair costs: 0, and the rest as before.
  for (auto& block : blocks) block.diagonal_forward_s = block.diagonal_backward_s = 0;
  const ComputeFit full_only = fit_compute_model(blocks);
  CHECK(full_only.masked_pair_cost == 0);
  CHECK(full_only.backward_masked_pair_cost == 0);
  CHECK(full_only.rate_flops_per_s == Approx(rate).epsilon(1e-6));
  CHECK(full_only.backward_rate_ratio == Approx(rho).epsilon(1e-6));
  CHECK(full_only.backward_half_efficiency_tokens == Approx(half_back).epsilon(1e-6));
}

TEST_CASE("the compute model fit keeps every term non-negative by fitting the others again", "[backend][calibration]") {
  // Block timings recorded by `tessera calibrate` on the two-core development VM (2026-12-02,
  // 4 heads of 32, bf16): forward, backward, diagonal forward, diagonal backward seconds. Every
  // block's rate is flat within 2.5 % (2.76 to 2.89 GFLOP/s), but the unconstrained fit puts the
  // per-block overhead at -64 us and leans on a half efficiency of 6.5 tokens; clamping the
  // overhead to 0 afterwards modelled the 64-token blocks 9.6 % (full) and 14.6 % (diagonal)
  // slower than they ran. The expected figures are the exhaustive non-negative least-squares
  // answer computed apart from this code (docs/measurements/cpu-rounds/refit_nonnegative.py,
  // each subset of the terms fitted with the rest at 0, the best non-negative one kept).
  const struct {
    int64_t side;
    double forward_s, backward_s, diagonal_forward_s, diagonal_backward_s;
  } recorded[] = {{64, 0.000728181, 0.001545518, 0.000424174, 0.000827282},
                  {128, 0.003036323, 0.006291596, 0.001702026, 0.003352809},
                  {256, 0.011823888, 0.025080793, 0.006813552, 0.012905932},
                  {512, 0.046497837, 0.098932925, 0.026714958, 0.052797825}};
  std::vector<BlockMeasurement> blocks;
  for (const auto& row : recorded) {
    BlockMeasurement block;
    block.side_tokens = row.side;
    block.flops = 4.0 * static_cast<double>(row.side * row.side) * 32 * 4;
    block.forward_s = row.forward_s;
    block.backward_s = row.backward_s;
    block.diagonal_forward_s = row.diagonal_forward_s;
    block.diagonal_backward_s = row.diagonal_backward_s;
    blocks.push_back(block);
  }
  const ComputeFit fit = fit_compute_model(blocks);
  CHECK(fit.rate_flops_per_s == Approx(2.84264535e9).epsilon(1e-6));
  CHECK(fit.masked_pair_cost == Approx(0.140969314).epsilon(1e-6));
  CHECK(fit.half_efficiency_tokens == 0);
  CHECK(fit.overhead_s == 0);
  CHECK(fit.backward_rate_ratio == Approx(1.18398703).epsilon(1e-6));
  CHECK(fit.backward_masked_pair_cost == Approx(0.0509663252).epsilon(1e-6));
  CHECK(fit.backward_half_efficiency_tokens == 0);
  // With those terms the model is the visible pairs plus mu times the masked ones over the
  // rate: every recorded block within 3 % (the reference computation's largest is 2.8 %).
  for (const BlockMeasurement& block : blocks) {
    const double s = static_cast<double>(block.side_tokens), visible = block.flops * (s + 1) / (2 * s),
                 masked = block.flops * (s - 1) / (2 * s), backward_rate = fit.rate_flops_per_s * fit.backward_rate_ratio;
    CHECK(block.flops / fit.rate_flops_per_s == Approx(block.forward_s).epsilon(0.03));
    CHECK((visible + fit.masked_pair_cost * masked) / fit.rate_flops_per_s == Approx(block.diagonal_forward_s).epsilon(0.03));
    CHECK(2.5 * block.flops / backward_rate == Approx(block.backward_s).epsilon(0.03));
    CHECK(2.5 * (visible + fit.backward_masked_pair_cost * masked) / backward_rate ==
          Approx(block.diagonal_backward_s).epsilon(0.03));
  }
}

TEST_CASE("calibrating the CPU executor measures every block size and writes the calibration", "[backend][calibration]") {
  Problem shape = small_problem(Pass::forward);
  auto executor = make_executor("cpu", {});
  ComputeCalibration calibration = calibrate_compute(*executor, shape, {32, 64, 128}, 2);
  REQUIRE(calibration.blocks.size() == 3);
  CHECK(calibration.peak_flops_per_s > 0);
  CHECK(calibration.backward_over_forward > 0);
  CHECK(calibration.merge_bytes_per_s > 0);
  // How well the fit describes noisy timings is not asserted here (timing belongs to benchmarks;
  // the fit itself is checked on exact data above). A block with 16x the work takes longer.
  CHECK(calibration.blocks[2].forward_s > calibration.blocks[0].forward_s);
  const CalibrationFile file = calibration_file(calibration, "cpu", shape);
  CHECK(file.peak_flops_per_s_16bit == calibration.peak_flops_per_s);  // bf16 blocks: the 16-bit rate
  CHECK_FALSE(file.peak_flops_per_s_fp32.has_value());
  CHECK(file.max_efficiency == 1.0);  // folded into the fitted rate
  // The speed reference: the middle side's block on the calibrated head shape, timed, and on every
  // core the executor has (up to 16) where it has more than one.
  REQUIRE(file.speed_reference.has_value());
  CHECK(file.speed_reference->side_tokens == 64);
  CHECK(file.speed_reference->heads == shape.heads);
  CHECK(file.speed_reference->head_dim == shape.head_dim);
  CHECK(file.speed_reference->dtype == "bf16");
  CHECK(file.speed_reference->times.block_s > 0);
  CHECK((file.speed_reference->devices == 1) == (file.speed_reference->times.devices_s == 0));
  // Timed now on the same executor, the reference gives times of the same kind.
  const SpeedReferenceTimes now = time_speed_reference(*executor, *file.speed_reference, 1);
  CHECK(now.block_s > 0);
  CHECK((now.devices_s > 0) == (file.speed_reference->devices > 1));
  REQUIRE(file.measured.has_value());
  CHECK(file.measured->blocks.size() == 3);
  CHECK(file.measured->dtype == "bf16");
  CHECK(file.measured->spread >= 0);
  // The default retiming (BlockRetiming: at most 3 timings, until the widest interquartile range
  // is 25 % or less): every timing but the last was unsteady, the last is steady unless it is
  // the third, and the kept one is the steadiest.
  const std::vector<double>& timings = calibration.block_timing_spreads;
  REQUIRE(timings.size() >= 1);
  REQUIRE(timings.size() <= 3);
  for (size_t k = 0; k + 1 < timings.size(); ++k) CHECK(timings[k] > 0.25);
  if (timings.size() < 3) CHECK(timings.back() <= 0.25);
  CHECK(calibration.spread_by_figure.blocks.interquartile == *std::min_element(timings.begin(), timings.end()));
  CHECK(file.measured->block_timing_spreads == timings);
  // No one-device executor given: no concurrency curve or copies; with more than one core, the
  // busy-cores curve (the executor puts two ranks on two cores).
  CHECK(file.sharing.has_value() == (cpu_cores() > 1));
  if (file.sharing) {
    CHECK(file.sharing->concurrency_speedup.empty());
    CHECK_FALSE(file.sharing->copy_bytes_per_s.has_value());
    CHECK(file.sharing->devices_speedup.size() == static_cast<size_t>(std::min(cpu_cores(), 16)));
  }
}

TEST_CASE("calibrating with a one-device executor measures the concurrency curve and copies", "[backend][calibration]") {
  Problem shape = small_problem(Pass::forward);
  auto executor = make_executor("cpu", {});
  auto one_device = one_core_executor();
  std::vector<std::string> lines;
  int last_done = 0, steps = 0;
  ComputeCalibration calibration = calibrate_compute(
      *executor, shape, {32, 64, 128}, 2,
      [&](int done, int total, const std::string& line) {
        // A finished step advances by one; an announcement of a long one repeats the count.
        const bool announcement = line.rfind("timing the blocks", 0) == 0;
        CHECK(done == last_done + (announcement ? 0 : 1));
        last_done = done;
        steps = total;
        lines.push_back(line);
      },
      one_device.get(), 3);
  // The blocks' timing is announced first, before any block's figure.
  REQUIRE(!lines.empty());
  CHECK(lines.front().rfind("timing the blocks (3 sides", 0) == 0);
  // 3 sides x (blocks, transfers) + merges + each number of busy cores from 2 (up to 16) + 3
  // concurrency levels + copies.
  const int busy_levels = std::min(cpu_cores(), 16) - 1;
  CHECK(steps == 2 * 3 + 1 + busy_levels + 3 + 1);
  CHECK(calibration.devices_speedup.size() == static_cast<size_t>(busy_levels > 0 ? busy_levels + 1 : 0));
  // n busy devices deliver at most n times one's throughput, whatever the noise measured.
  for (size_t n = 1; n <= calibration.devices_speedup.size(); ++n) CHECK(calibration.devices_speedup[n - 1] <= static_cast<double>(n));
  // The headline spread is the widest max - min of the four groups.
  const CalibrationSpread& spread = calibration.spread_by_figure;
  CHECK(calibration.spread == std::max({spread.blocks.full_range, spread.merges.full_range, spread.busy_devices.full_range,
                                        spread.concurrency.full_range}));
  CHECK(spread.concurrency.interquartile <= spread.concurrency.full_range);
  CHECK(last_done == steps);
  REQUIRE(calibration.concurrency_speedup.size() == 3);
  CHECK(calibration.concurrency_speedup[0] == 1);  // by definition
  // Timing on a shared machine is noisy, so only the range is asserted: k + 1 blocks on one
  // core cannot deliver k + 1 times one block's throughput (nor less than nothing).
  for (size_t k = 1; k < 3; ++k) {
    CHECK(calibration.concurrency_speedup[k] > 0);
    CHECK(calibration.concurrency_speedup[k] < static_cast<double>(k + 1));
  }
  // The diagonal blocks were measured beside the full ones, so the file says what masked pairs cost.
  for (const BlockMeasurement& block : calibration.blocks) {
    CHECK(block.diagonal_forward_s > 0);
    CHECK(block.diagonal_backward_s > 0);
  }
  const CalibrationFile file = calibration_file(calibration, "cpu", shape);
  REQUIRE(file.sharing.has_value());
  CHECK(file.sharing->concurrency_speedup == calibration.concurrency_speedup);
  // Unless told otherwise, the curve's blocks are the middle side's, and the file says so.
  CHECK(std::find(lines.begin(), lines.end(), "concurrency 1: one 64-token block") != lines.end());
  CHECK(calibration.concurrency_side_tokens == 64);
  REQUIRE(file.measured.has_value());
  CHECK(file.measured->concurrency_side_tokens == 64);
}

TEST_CASE("the concurrency curve is measured with the blocks asked for", "[backend][calibration]") {
  Problem shape = small_problem(Pass::forward);
  auto executor = make_executor("cpu", {});
  auto one_device = one_core_executor();
  std::vector<std::string> lines;
  const ComputeCalibration calibration = calibrate_compute(
      *executor, shape, {32, 64, 128}, 1, [&](int, int, const std::string& line) { lines.push_back(line); },
      one_device.get(), 2, {}, 48);
  // 48 tokens is none of the blocks' sides: the curve's runs are their own.
  CHECK(std::find(lines.begin(), lines.end(), "concurrency 1: one 48-token block") != lines.end());
  CHECK(calibration.concurrency_side_tokens == 48);
  CHECK(calibration.concurrency_speedup.size() == 2);
  CHECK(calibration_file(calibration, "cpu", shape).measured->concurrency_side_tokens == 48);
  CHECK_THROWS_WITH(calibrate_compute(*executor, shape, {32, 64, 128}, 1, {}, one_device.get(), 2, {}, -5),
                    Catch::Contains("block side must be positive"));
}

TEST_CASE("blocks that never time steadily are timed the most times allowed, the steadiest kept", "[backend][calibration]") {
  Problem shape = small_problem(Pass::forward);
  auto executor = make_executor("cpu", {});
  // No timing has a negative interquartile range, so every one of the three is unsteady.
  const ComputeCalibration calibration = calibrate_compute(*executor, shape, {32, 64, 128}, 2, {}, nullptr, 4, {-1.0, 3});
  const std::vector<double>& timings = calibration.block_timing_spreads;
  REQUIRE(timings.size() == 3);
  const size_t steadiest = static_cast<size_t>(std::min_element(timings.begin(), timings.end()) - timings.begin());
  CHECK(calibration.spread_by_figure.blocks.interquartile == timings[steadiest]);
  // Kept with its blocks and the speed reference of the same passes: both were timed.
  CHECK(calibration.speed_reference.times.block_s > 0);
  for (const BlockMeasurement& block : calibration.blocks) CHECK(block.forward_s > 0);
  // Any spread at all is steady enough under an unbounded threshold: timed once.
  const ComputeCalibration once = calibrate_compute(*executor, shape, {32, 64, 128}, 2, {}, nullptr, 4, {1e300, 3});
  CHECK(once.block_timing_spreads.size() == 1);
  CHECK_THROWS_WITH(calibrate_compute(*executor, shape, {32, 64, 128}, 2, {}, nullptr, 4, {0.25, 0}),
                    Catch::Contains("at least one timing"));
}

TEST_CASE("the link fit recovers bandwidth and latency from exact times", "[backend][calibration]") {
  // t = 12 us + bytes / 25 GB/s at three sizes.
  std::vector<std::pair<double, double>> samples;
  for (double bytes : {1e6, 8e6, 64e6}) samples.emplace_back(bytes, 12e-6 + bytes / 25e9);
  auto [bandwidth, latency] = fit_link(samples);
  CHECK(bandwidth == Approx(25e9).epsilon(1e-9));
  CHECK(latency == Approx(12e-6).epsilon(1e-6));
  // Times that do not grow with the bytes say nothing about bandwidth.
  auto flat = fit_link({{1e6, 3e-6}, {8e6, 3e-6}});
  CHECK(flat.first == 0);
}

TEST_CASE("a figure's spread: the interquartile range and max - min over the median, by hand", "[backend][calibration]") {
  // Sorted 1, 2, 3, 4, 100: median 3 (the middle one), quartiles 2 and 4 (a quarter of the way in
  // from each end, index 5 / 4 = 1 and 5 - 1 - 1 = 3), so (4 - 2) / 3; max - min (100 - 1) / 3.
  const FigureSpread spread = spread_of({100, 3, 1, 4, 2});
  CHECK(spread.interquartile == Approx(2.0 / 3));
  CHECK(spread.full_range == Approx(99.0 / 3));
  // Eight values 10..17: median 14 (index 4), quartiles 12 and 15 (indices 2 and 5).
  const FigureSpread even = spread_of({17, 16, 15, 14, 13, 12, 11, 10});
  CHECK(even.interquartile == Approx(3.0 / 14));
  CHECK(even.full_range == Approx(7.0 / 14));
  // One value, or none, has no spread.
  CHECK(spread_of({5}).full_range == 0);
  CHECK(spread_of({}).interquartile == 0);
}

TEST_CASE("timed runs: enough for the timing target, never past the wall-clock cap, never under the repeats",
          "[backend][calibration]") {
  const TimingBudget budget{0.25, 200, 5.0};
  // A CPU block: 10 ms of op time in 11 ms of wall time. 0.25 / 0.01 = 25 runs, which take
  // 25 x 11 ms, well inside the 5 s cap.
  CHECK(timed_runs(budget, 0.010, 0.011, 5) == 25);
  // A 1 ms block timed at 1 ms: 250 runs wanted, 200 at most.
  CHECK(timed_runs(budget, 0.001, 0.001, 5) == 200);
  // A GPU block (what an H200 showed): 0.2 ms of kernel time in 0.5 s of the host's work around
  // it. The target alone asks 0.25 / 0.0002 = 1250 -> 200 runs, 100 s; the cap allows
  // 5 / 0.5 = 10.
  CHECK(timed_runs(budget, 0.0002, 0.5, 5) == 10);
  // A run so slow that the cap allows one (5 / 3 -> 2): the repeats still hold.
  CHECK(timed_runs(budget, 0.0002, 3.0, 5) == 5);
  // Wall time unknown (0): the timing target alone. Op time unknown: the repeats.
  CHECK(timed_runs(budget, 0.01, 0, 5) == 25);
  CHECK(timed_runs(budget, 0, 0.5, 7) == 7);
}

TEST_CASE("a NaN in an output is an infinite error, not a skipped one", "[executor]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(max_abs_error({1.0, 2.5, 3.0}, {1.0, 2.0, 3.0}) == 0.5);
  CHECK(max_abs_error({1.0, nan, 3.0}, {1.0, 2.0, 3.0}) == std::numeric_limits<double>::infinity());
  CHECK(max_abs_error({nan}, {nan}) == std::numeric_limits<double>::infinity());
  CHECK(max_abs_error({1.0}, {1.0, 2.0}) == std::numeric_limits<double>::infinity());
}
