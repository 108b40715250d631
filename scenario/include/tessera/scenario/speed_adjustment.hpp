#pragma once
// The machine's speed now against at calibration: `tessera validate` times the calibration
// file's speed reference (core/calibration_file.hpp) right before and right after its run, and
// predicts with the calibrated model scaled to the speed the machine has now. A VM's cores switch
// between fast and slow states that outlast a calibration (the same block measured 28 ms in one
// calibration and 49 ms in the next), which a prediction with the calibration-time speed carries
// whole into its error.
//   compute factor = block_s now / the calibrated model's time for that block: every block and
//                    merge the device runs takes that many times its calibrated time (transfers
//                    and copies keep theirs: a GPU's links do not drift with its clocks). Compared
//                    with the model's time rather than the reference's own time at calibration
//                    (its lower quartile over the same passes): the two agree to 1-3 % when the
//                    calibration was steady, but where the machine changed speed during it, the
//                    reference's quartile may come from other seconds than the fit's (one
//                    calibration on this two-core VM timed it at 6.32 ms and fitted 8.86 ms). Over
//                    12 recorded rounds of 12 validations (docs/measurements/cpu-rounds), the
//                    median error per round averaged 5.7 % this way against 8.0 % by the
//                    reference's own time, lower in 8 rounds and higher in 3; that round went
//                    from 35.0 to 10.9 %;
//   devices factor = (devices x alone_s / devices_s) now / the calibrated curve's speedup of that
//                    many busy devices: so that the adjusted curve holds what the devices deliver
//                    together now. Compared with the curve the model uses rather than with the
//                    reference's own times at calibration: those were taken in other seconds of
//                    the calibration than the curve, and a neighbour that took a core in those
//                    seconds alone (measured: 0.78x against the curve's 1.92x) would have made a
//                    factor of 2.4 out of nothing.
//                    Readings that low were, until the CPU executor started every rank's ops
//                    together, also its thread start-up: the second of two ranks began about
//                    2 ms late, and two 4 ms blocks measured 1.3-1.5x one (bench_cpu_devices).
// Before and after the run are combined by their mean: a switch during the run falls between.
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/calibration_file.hpp"
#include "tessera/sim/gpu_profile.hpp"

namespace tessera::scenario {

struct SpeedFactors {
  double compute = 1;
  double devices = 1;  // 1 where the reference has one device
};

// The factors of one timing of the reference (`now`) against the calibrated model's time for
// the reference block (`modelled_block_s`, below) and the calibrated busy-devices curve
// (`devices_speedup`, taken at the reference's devices or at its last entry; empty or a
// reference of one device: devices factor 1). UserError when a time is not above 0 (a broken
// measurement).
SpeedFactors speed_factors(const CalibratedSpeedReference& calibrated, const SpeedReferenceTimes& now,
                           const std::vector<double>& devices_speedup, double modelled_block_s);

// What `gpu` (the calibration's compute model) charges for the reference's block: one full
// (unmasked) forward block of side_tokens x side_tokens, heads x head_dim, in its dtype.
double modelled_block_s(const CalibratedSpeedReference& reference, const sim::GpuProfile& gpu);

// The mean of the factors before and after the run.
SpeedFactors combined_factors(const SpeedFactors& before, const SpeedFactors& after);

// How far the factors moved over the timings of one validation (before its first execution and
// after each): per factor, the largest over the smallest. Each execution is predicted at the mean
// of the two timings around it, so where the machine's speed moves by more than a validation's
// tolerance between timings seconds apart, no execution can be resolved to that tolerance and
// the error is the machine's as much as the model's. (Recorded on the two-core VM,
// docs/measurements/cpu-rounds: in the eight runs before 2026-11-28 17:57 the median
// validation's compute factor moved by 1 to 5 % and 21 rounds of 24 met the goal; in the nine
// since, by 12 to 52 %, and 11 of 27.) UserError for no timings or a factor not above 0.
struct SpeedSpread {
  double compute = 1;
  double devices = 1;
  // Whether both moved by at most `tolerance` (0.10: within 10 %).
  bool steady(double tolerance) const { return compute <= 1 + tolerance && devices <= 1 + tolerance; }
};
SpeedSpread speed_spread(const std::vector<SpeedFactors>& timings);

// `gpu` running `compute_factor` times slower: its rates (16-bit, fp32, memory) divided by the
// factor and its launch overhead multiplied, so that every block_compute_s and merge time is
// `compute_factor` times the calibrated one.
sim::GpuProfile with_compute_factor(sim::GpuProfile gpu, double compute_factor);

// The devices curve with the speedup of the reference's `devices` busy devices multiplied by
// `devices_factor`: entry n (n busy devices) by 1 + (factor - 1) (n - 1) / (devices - 1) up to
// `devices` (one device stays 1: the compute factor holds its speed), and by the factor beyond.
// n busy devices deliver at most n times one (a noisy timing does not make more), and at least
// 1e-3 (the calibration file's range).
std::vector<double> with_devices_factor(std::vector<double> devices_speedup, double devices_factor, int32_t devices);

}  // namespace tessera::scenario
