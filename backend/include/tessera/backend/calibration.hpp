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
  double backward_rate_ratio = 1;    // backward FLOP rate over forward's: 2.5 / backward_over_forward
  double merge_bytes_per_s = 0;      // merges: 3 x partial bytes (read two, write one) per second
  // Transfers between two ranks (device copies, NCCL, or nothing at all for the CPU
  // interpreter): time = latency + bytes / bandwidth, fitted over the block sides. Zero when
  // the executor's transfers take no measurable time.
  double link_bytes_per_s = 0;
  double link_latency_s = 0;
  double largest_block_flops_per_s = 0;
  // Ranks sharing one device (measured with the one-device executor; empty / 0 without one):
  // speedup[k - 1] = k^2 blocks' time alone / the makespan of a k-rank ring of full blocks
  // with every rank on one device (the throughput of k concurrent blocks over one block's), and
  // copies between two ranks on the device (bytes per second of its transfers).
  std::vector<double> concurrency_speedup;
  double copy_bytes_per_s = 0;
  // The largest (max - min) / median over the repeats of any one figure timed.
  double spread = 0;
};

// Progress of a calibration: done of total steps, and a line saying what was measured.
using CalibrationProgress = std::function<void(int done, int total, const std::string& line)>;

// Runs one-rank forward and backward schedules of full blocks of each side on `executor` and
// fits the model by least squares. `heads`, `head_dim` and `dtype` come from `shape`. Each
// schedule is offered to can_run first; a refusal is thrown (require_ready).
// With `one_device` (an executor that runs every rank of a schedule on one device: the CPU
// executor on one core, CUDA's local transport), it also measures the concurrency curve for
// k = 1 .. max_concurrency at the middle block side, and the copy bandwidth between two ranks on
// one device. Each figure is the median of `repeats` timed runs after one warm-up run.
ComputeCalibration calibrate_compute(ScheduleExecutor& executor, const Problem& shape, const std::vector<int64_t>& sides,
                                     int repeats, const CalibrationProgress& progress = {},
                                     ScheduleExecutor* one_device = nullptr, int max_concurrency = 4);

// Least-squares line through (bytes, seconds): {bandwidth, latency}; bandwidth 0 when the
// times do not grow with the bytes.
std::pair<double, double> fit_link(const std::vector<std::pair<double, double>>& bytes_seconds);

// Least-squares fit of t = F / R + F x half / (R x side) + overhead (the profile's model).
// Returns {R, half, overhead}; half and overhead are clamped at 0.
struct ComputeFit {
  double rate_flops_per_s = 0, half_efficiency_tokens = 0, overhead_s = 0;
};
ComputeFit fit_compute_model(const std::vector<BlockMeasurement>& blocks);

// The calibration file: the simulator's profile fields, the link, and what was measured, for
// the record. `device` names what ran (the executor), `shape` the problem the blocks had.
CalibrationFile calibration_file(const ComputeCalibration& calibration, const std::string& device, const Problem& shape);

}  // namespace tessera::backend
