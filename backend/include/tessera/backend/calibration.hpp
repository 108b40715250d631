#pragma once
// Measures how fast an executor computes attention blocks and fits the simulator's compute
// model to it (sim/gpu_profile.hpp: time = FLOPs / (peak x efficiency(side)) + overhead, with
// efficiency(side) = side / (side + half_efficiency_tokens)), so that predictions use the
// machine's own speed. The result is the calibration file (core/calibration_file.hpp) that
// `tessera simulate --calibration` reads. Works on any executor, through its interface.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backend/executor.hpp"
#include "tessera/core/calibration_file.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::backend {

using BlockMeasurement = MeasuredBlock;

struct ComputeCalibration {
  std::vector<BlockMeasurement> blocks;
  double peak_flops_per_s = 0;       // the fitted large-block rate (efficiency folded in: max_efficiency = 1)
  double half_efficiency_tokens = 0;
  double launch_overhead_s = 0;
  double backward_over_forward = 0;  // measured backward / forward time, large blocks (FLOPs say 2.5)
  double backward_rate_ratio = 1;    // backward FLOP rate over forward's (fitted over every block)
  // A masked pair's time over a visible pair's, forward and backward (the diagonal blocks'
  // fit; sim/gpu_profile.hpp's masked_pair_cost).
  double masked_pair_cost = 0, backward_masked_pair_cost = 0;
  double backward_half_efficiency_tokens = 0;  // the backward pass's own per-row work
  double merge_bytes_per_s = 0;      // merges: 3 x partial bytes (read two, write one) per second
  // Transfers between two ranks (device copies, NCCL, or nothing at all for the CPU
  // interpreter): time = latency + bytes / bandwidth, fitted over the block sides. Zero when
  // the executor's transfers take no measurable time.
  double link_bytes_per_s = 0;
  double link_latency_s = 0;
  double largest_block_flops_per_s = 0;
  // Ranks sharing one device (measured with the one-device executor; empty / 0 without one):
  // speedup[k - 1] = k blocks' time alone / the makespan of k ranks on one device computing one
  // block each (the throughput of k concurrent blocks over one block's), and
  // copies between two ranks on the device (bytes per second of its transfers).
  std::vector<double> concurrency_speedup;
  int64_t concurrency_side_tokens = 0;  // the side of the blocks the curve was measured with
  double copy_bytes_per_s = 0;
  // Devices sharing the machine (measured where the executor puts n ranks on n devices, n up to
  // 16: the CPU executor's cores): speedup[n - 1] = n blocks' time alone / the makespan of n ranks on n
  // devices computing one block each. Empty where the executor has one device.
  std::vector<double> devices_speedup;
  // The largest (max - min) / median over the repeats of any one figure timed, and each group's
  // spreads (core/calibration_file.hpp).
  double spread = 0;
  CalibrationSpread spread_by_figure;
  // The blocks' widest interquartile range of each time they were timed, in order (BlockRetiming):
  // one entry when the first timing was steady; spread_by_figure.blocks is the kept one's.
  std::vector<double> block_timing_spreads;
  // The machine's speed while it was calibrated (core/calibration_file.hpp): a fixed workload
  // at the middle side, timed in the same passes as the blocks.
  CalibratedSpeedReference speed_reference;
};

// The lower quartile of timings: what the machine does when nothing else takes it. Another
// process only ever slows a run down, so on a shared machine the median moves with its load,
// while the quartile stays (and on an idle machine the two agree). 0 for no values.
double lower_quartile(std::vector<double> values);

// `ranks` ranks with one block each and nothing else to do: `problem`'s heads, head dimensions
// and dtype over a documents mask of one document of `side` tokens per rank, so that rank r's
// block (r, r) (its document's causal diagonal block) is all the work there is, forward, with no
// transfer. The workload of the concurrency and busy-devices figures and of the speed reference.
schedules::CheckedSchedule independent_blocks(Problem problem, int64_t side, int32_t ranks);

// How far repeated timings of one figure moved, over their median: the interquartile range
// (the value a quarter of the way in from the top less the one a quarter of the way in from the
// bottom, as the lower quartile is picked) and max - min. Zero for fewer than two values.
FigureSpread spread_of(std::vector<double> values);

// How many timed runs a figure gets: at least `repeats`, and enough for the timed ops to add up to
// `timed_s` (a scheduler tick of another process lands on one run of a millisecond block in
// several, and a median of five such runs still moves with it), at most `most`. But never more
// than fill `wall_cap_s` of wall-clock time: on a GPU a run's wall time is mostly the host's own
// work around its kernels (inputs copied, converted, uploaded), hundreds of times the kernels'
// time, and the op-time target alone would have a 4K-token calibration run for many minutes.
// `op_s` and `wall_s` are those of one warm-up run (0: unknown, then `repeats`).
struct TimingBudget {
  double timed_s = 0.25;
  int most = 200;
  double wall_cap_s = 5;
};
int timed_runs(const TimingBudget& budget, double op_s, double wall_s, int repeats);

// When the block timings are taken again. On a machine that switches between fast and slow
// states (a shared VM), a timing that straddles a switch comes out with a wide interquartile
// range, and a calibration fitted to it predicts neither state: the blocks and the speed
// reference (timed in the same passes) are timed again, up to `attempts` times in all, until
// the widest interquartile range over the median is at most `max_interquartile`; the steadiest
// timing is kept.
struct BlockRetiming {
  double max_interquartile = 0.25;
  int attempts = 3;
};

// Progress of a calibration: done of total steps, and a line saying what was measured; before a
// long step (the blocks' timing) also a line announcing it, with `done` unchanged.
using CalibrationProgress = std::function<void(int done, int total, const std::string& line)>;

// Runs one-rank forward and backward schedules of each side on `executor`, over a full block and
// over a causal diagonal block, and fits the model by least squares (fit_compute_model). `heads`, `head_dim` and `dtype` come from `shape`. Each
// schedule is offered to can_run first; a refusal is thrown (require_ready).
// With `one_device` (an executor that runs every rank of a schedule on one device: the CPU
// executor on one core, CUDA's local transport), it also measures the concurrency curve for
// k = 1 .. max_concurrency at the middle block side (k ranks computing one block each, nothing
// else), and the copy bandwidth between two ranks on
// one device. Each figure is the median of `repeats` timed runs after one warm-up run; the
// blocks are timed again as `retiming` says. The concurrency curve is measured with blocks of
// `concurrency_side_tokens` (0: the middle of `sides`): how much of a device one rank's kernel
// leaves idle for another's depends on the kernel's size, so it is best measured at the blocks
// the schedules to be predicted compute.
ComputeCalibration calibrate_compute(ScheduleExecutor& executor, const Problem& shape, const std::vector<int64_t>& sides,
                                     int repeats, const CalibrationProgress& progress = {},
                                     ScheduleExecutor* one_device = nullptr, int max_concurrency = 4,
                                     const BlockRetiming& retiming = {}, int64_t concurrency_side_tokens = 0);

// The speed reference's workload on the calibrated shape: one block of `side` tokens, heads =
// key/value heads = the shape's, its head dimension and dtype; the executor's devices up to 16
// (1: no busy-devices figures). Times left 0.
CalibratedSpeedReference speed_reference_workload(const ScheduleExecutor& executor, const Problem& shape, int64_t side);

// Times the reference's workload on `executor` now (core/calibration_file.hpp says what): one
// warm-up pass, then passes of its runs until `repeats` of them and a fifth of a second of
// timing (at most 100, and at most 5 s of wall-clock time: timed_runs); each time the lower
// quartile of its runs, as the calibration takes it.
// A reference of several devices on an executor that does not put them on devices of their own
// leaves alone_s and devices_s 0.
SpeedReferenceTimes time_speed_reference(ScheduleExecutor& executor, const CalibratedSpeedReference& reference, int repeats);

// Least-squares line through (bytes, seconds): {bandwidth, latency}; bandwidth 0 when the
// times do not grow with the bytes.
std::pair<double, double> fit_link(const std::vector<std::pair<double, double>>& bytes_seconds);

// Least-squares fit (relative errors) of the profile's model (sim/gpu_profile.hpp) to the blocks:
// forward t = F(visible) / R + mu F(masked) / R + F(area) x half / (R x side) + overhead over the
// full and the diagonal blocks (F: forward FLOPs of those pairs; without diagonal blocks, mu is
// not fitted and stays 0); then backward, with the same overhead, its rate ratio rho, masked
// cost mu' and half': t = 2.5 [F(visible) + mu' F(masked) + F(area) half' / side] / (R rho) +
// overhead (without backward times, rho stays 1). The halves, overhead, mu and mu' are kept at
// or above 0 by a non-negative fit (each subset of them fitted with the rest at 0, the best
// non-negative one kept), not by clamping an unconstrained fit: a negative term clamped to 0
// leaves the others fitted to lean on it (one calibration's 64-token blocks were then modelled
// 9.6 and 14.6 % slower than they ran).
struct ComputeFit {
  double rate_flops_per_s = 0, half_efficiency_tokens = 0, overhead_s = 0;
  double masked_pair_cost = 0;
  double backward_rate_ratio = 1, backward_masked_pair_cost = 0, backward_half_efficiency_tokens = 0;
};
ComputeFit fit_compute_model(const std::vector<BlockMeasurement>& blocks);

// The calibration file: the simulator's profile fields, the link, and what was measured, for
// the record. `device` names what ran (the executor), `shape` the problem the blocks had.
CalibrationFile calibration_file(const ComputeCalibration& calibration, const std::string& device, const Problem& shape);

}  // namespace tessera::backend
