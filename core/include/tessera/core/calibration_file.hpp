#pragma once
// The calibration file: what `tessera calibrate` measured on an executor. The backend writes it;
// the simulator reads its compute model, launch and per-message costs (sim/gpu_profile.hpp), and
// `tessera validate` its link. This is the one reader and the one writer, so the format is
// stated once, here:
//   {"gpu": "h100",                       the profile whose figures the file replaces
//    "device": "cuda/local",              what was measured, in words
//    "peak_flops_per_s_16bit": 4.1e14,    (or _fp32) the GPU profile's compute model ...
//    "max_efficiency": 1.0, "half_efficiency_tokens": 310, "backward_rate_ratio": 0.8,
//    "launch_overhead_s": 6e-6,           ... and its kernel launch
//    "block_model": {"forward_masked_pair_cost": 0.05, "backward_masked_pair_cost": 0.02,
//                    "backward_half_efficiency_tokens": 20},   blocks that visit every pair (below)
//    "hbm_bytes_per_s": 2.1e12,           merges
//    "message": {"overhead_s": 8.4e-6, "nvlink_latency_s": 3.4e-6, "network_latency_s": 1.4e-5},
//    "link": {"bytes_per_s": 3e11, "latency_s": 1e-5},   the executor's own transfers
//    "intra_node_link": {...}, "inter_node_link": {...},  the same per level (nccl-tests import)
//    "sharing": {"concurrency_speedup": [1, 1.7, 2.2],      ranks sharing one device: throughput
//                "devices_speedup": [1, 1.3],               of k concurrent blocks over one's, of n
//                "copy_bytes_per_s": 2e10},                 busy devices over one's; copies
//    "speed_reference": {"side_tokens": 256, "heads": 4, "head_dim": 32, "dtype": "fp32",
//                        "block_s": 0.0081, "devices": 2, "alone_s": 0.0046, "devices_s": 0.0047},
//                                         the machine's speed when it was calibrated (below)
//    "measured": {...}}                   what the fit was made from, for the record
// Every field is optional ("gpu" defaults to h100): a field present replaces the profile's or the
// hardware's figure, one absent leaves it. An unknown field is an error (a misspelt one would
// silently leave the profile's figure), and so is a value outside its plausible range, since a
// broken measurement would otherwise become a simulation of 10^30 seconds or none at all:
//   peak_flops_per_s_16bit, peak_flops_per_s_fp32   1e6 to 1e18 FLOP/s
//   hbm_bytes_per_s, *link.bytes_per_s              1e6 to 1e15 bytes/s
//   max_efficiency                                  1e-3 to 1
//   half_efficiency_tokens                          above 0, up to 1e6 tokens
//   backward_rate_ratio                             1e-3 to 1e3
//   block_model.*_masked_pair_cost                  0 to 1e3 (all three fields required)
//   block_model.backward_half_efficiency_tokens     0 to 1e6 tokens
//   launch_overhead_s, message.*                    0 to 1 s
//   *link.latency_s                                 -1 to 1 s (a fitted value below 0 reads as 0)
//   sharing.concurrency_speedup, .devices_speedup   1 to 64 values, each 1e-3 to 1e6, the first 1
//   sharing.copy_bytes_per_s                        1e6 to 1e15 bytes/s
//   speed_reference.side_tokens, .heads, .head_dim  1 to 1e6 (all of its fields required, "dtype"
//                                                   a dtype name; alone_s and devices_s only, and
//                                                   then both, where devices is 2 or more)
//   speed_reference.*_s                             above 0, up to 100 s
//   speed_reference.devices                         1 to 4096
// "gpu" must name a profile of hardware_presets.hpp; "measured" may hold anything.
// "block_model" is how an executor that visits every (query, key) pair of a block spends its
// time (the CPU executor tests each pair against the mask): a masked pair costs that fraction of
// a visible pair's time, and the block's per-row work is its whole area's, backward with its own
// half-efficiency side (sim/gpu_profile.hpp). Absent, a block costs its visible pairs only (a
// kernel that skips masked work).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/network_model.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera {

// A block of side x side tokens that a calibration timed: full (unmasked), and the diagonal
// block of a causal mask (side (side + 1) / 2 visible pairs), where measured.
struct MeasuredBlock {
  int64_t side_tokens = 0;
  double flops = 0;       // forward FLOPs of the full block (4 x side^2 x d x heads)
  double forward_s = 0;   // median measured time of the full block's compute op
  double backward_s = 0;
  double diagonal_forward_s = 0;  // the same for the causal diagonal block; 0: not measured
  double diagonal_backward_s = 0;
};

// How far a group of timed figures moved between their repeats, each over its figure's median:
// the widest interquartile range (what the lower quartiles and medians a calibration keeps are
// exposed to) and the widest full range, max - min (one preempted run sets it on a shared
// machine). 0 when not measured.
struct FigureSpread {
  double interquartile = 0;
  double full_range = 0;
};

// The spreads of each group of figures a calibration times.
struct CalibrationSpread {
  FigureSpread blocks;        // block compute times, every side and kind
  FigureSpread merges;        // the merge rate's times
  FigureSpread busy_devices;  // n busy devices' throughput over one's
  FigureSpread concurrency;   // k concurrent blocks' throughput on one device over one's
};

// What a calibration measured, kept for the record: written, never read back.
struct CalibrationRecord {
  int64_t heads = 0;
  int64_t head_dim = 0;
  std::string dtype;
  std::vector<MeasuredBlock> blocks;
  double backward_over_forward = 0;      // measured backward / forward time, largest block
  double largest_block_flops_per_s = 0;
  // The calibration's own repeatability: the largest (max - min) / median over the repeats of
  // any one figure it timed (a block, the merges, a throughput ratio; transfers are fitted, not
  // repeated as one figure). 0 when not measured. Per group, with the interquartile range too:
  double spread = 0;
  CalibrationSpread spread_by_figure;
  // The blocks' widest interquartile range each time they were timed (the steadiest kept).
  std::vector<double> block_timing_spreads;
  int64_t concurrency_side_tokens = 0;  // the blocks the concurrency curve was measured with; 0: none
};

// Ranks sharing one device, as measured (sim/shared_devices.hpp uses them): the throughput of
// k = 1, 2, ... concurrent blocks over one block's, and copies between ranks on the device; and
// devices sharing the machine (CPU cores that share a physical core or its memory): the compute
// throughput of n = 1, 2, ... busy devices together over one busy device's.
struct CalibratedSharing {
  std::vector<double> concurrency_speedup;  // speedup[k - 1]; speedup[0] = 1
  std::optional<double> copy_bytes_per_s;
  std::vector<double> devices_speedup;      // speedup[n - 1]; speedup[0] = 1; empty: independent devices
};

// Transfers between two ranks as an executor makes them: time = latency + bytes / bandwidth.
struct CalibratedLink {
  double bytes_per_s = 0;  // 1e6 to 1e15
  double latency_s = 0;    // 0 to 1 s; a negative value in a file (down to -1 s) reads as 0
};

// Per-message costs (network_model.hpp), each one measured or not.
struct CalibratedMessageCosts {
  std::optional<double> overhead_s, nvlink_latency_s, network_latency_s;
  // `base` with the measured fields in place of its own.
  MessageCosts over(const MessageCosts& base) const;
};

// An executor's blocks that visit every pair: what a masked pair costs, as a fraction of a
// visible pair's time, per pass, and the backward pass's per-row work.
struct CalibratedBlockModel {
  double forward_masked_pair_cost = 0, backward_masked_pair_cost = 0;  // 0 to 1e3
  double backward_half_efficiency_tokens = 0;                           // 0 to 1e6
};

// The machine's speed when it was calibrated, so that `tessera validate` can time the same fixed
// workload before its run and scale the calibrated compute by how much faster or slower the
// machine is now (a VM's cores switch between fast and slow states that outlast a calibration;
// scenario/speed_adjustment.hpp). The workload: one full forward block of side_tokens x side_tokens
// on one rank (block_s), and where the executor has several devices, one causal diagonal block
// of that side alone on one device (alone_s) and one on each of `devices` devices at once
// (devices_s, the makespan): devices x alone_s / devices_s is what the devices deliver
// together over one. Each time is the lower quartile of its runs, timed in the same passes as
// the calibrated blocks.
struct SpeedReferenceTimes {
  double block_s = 0;
  double alone_s = 0, devices_s = 0;  // 0: not measured (one device)
};
struct CalibratedSpeedReference {
  int64_t side_tokens = 0, heads = 0, head_dim = 0;
  std::string dtype = "fp32";
  int32_t devices = 1;
  SpeedReferenceTimes times;
};

struct CalibrationFile {
  std::string gpu{kDefaultGpu.name};
  std::optional<std::string> device;
  // The GPU profile's compute model, each within its range above where present.
  std::optional<double> peak_flops_per_s_16bit, peak_flops_per_s_fp32, hbm_bytes_per_s, max_efficiency,
      half_efficiency_tokens, launch_overhead_s, backward_rate_ratio;
  std::optional<CalibratedBlockModel> block_model;
  std::optional<CalibratedMessageCosts> message;  // seconds in [0, 1] where present
  std::optional<CalibratedLink> link;
  // Per level, from `tessera calibrate --from-nccl-tests --topology`: paths inside a server
  // (NVLink) and paths leaving it (the network).
  std::optional<CalibratedLink> intra_node_link, inter_node_link;
  std::optional<CalibratedSharing> sharing;
  std::optional<CalibratedSpeedReference> speed_reference;  // absent in files of older calibrations
  std::optional<CalibrationRecord> measured;
};

// Reads and checks the whole file. UserError naming the file and the field, e.g.
// "cal.json: max_efficiency: expected a number from 0.001 to 1, got 1.5".
CalibrationFile read_calibration_file(const std::string& path);

// Writes the fields present, as indented JSON. UserError naming the file when it cannot.
void write_calibration_file(const std::string& path, const CalibrationFile& file);

}  // namespace tessera
