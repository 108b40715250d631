#pragma once
// The analytical cost of a schedule on a uniform network: bytes by data kind, FLOPs, peak
// buffer memory, the CommCom ratio, an alpha-beta time with compute/communication overlap,
// and the lower bounds of lower_bound.hpp. Pure functions, no I/O.
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/lower_bound.hpp"
#include "tessera/core/network_model.hpp"

namespace tessera::costmodel {

// A GPU and a uniform network: every GPU pair has its own link of this latency and bandwidth
// (SI units: 1 GB/s = 1e9 B/s). Defaults (core/hardware_presets.hpp names the sources): H100 SXM
// (989 TFLOP/s dense bf16 at 60 %, 3.35 TB/s HBM) and 400 Gb/s InfiniBand per GPU (50 GB/s, 5 us).
// Per-message and per-kernel costs are on by default: every point-to-point message pays
// `message` (NCCL's figures, network_model.hpp) and every block kernel a launch.
struct Hardware {
  static constexpr double kKernelLaunchS = kDefaultKernelLaunchS;

  double peak_flops_per_s = kDefaultGpu.peak_flops_per_s_16bit;
  double compute_efficiency = kDefaultGpu.analytical_efficiency;
  double hbm_bytes_per_s = kDefaultGpu.hbm_bytes_per_s;
  double link_bytes_per_s = kDefaultNetworkLink.bytes_per_s;
  double link_latency_s = kDefaultNetworkLink.latency_s;
  double kernel_launch_s = kKernelLaunchS;  // per block kernel
  MessageCosts message;                     // per point-to-point message
  double effective_flops_per_s() const { return peak_flops_per_s * compute_efficiency; }
};

using BytesByKind = std::array<int64_t, kDataKindCount>;

struct GpuCost {
  BytesByKind sent_bytes{};
  BytesByKind received_bytes{};
  double flops = 0;
  int64_t resident_bytes = 0;       // own chunks (inputs and outputs), held throughout
  int64_t peak_transfer_bytes = 0;  // most bytes of remote chunks and partials held at once
  int64_t peak_memory_bytes = 0;    // resident + peak transfer
  double compute_s = 0;  // busy time of the compute stream
  double comm_s = 0;     // time this GPU's incoming transfers and collectives take
  double finish_s = 0;   // when its last op ends
  int64_t received_total() const;
  int64_t sent_total() const;
};

struct CostReport {
  std::vector<GpuCost> gpus;
  int64_t recv_bytes_max = 0;                // most bytes received by one GPU
  std::array<double, kDataKindCount> recv_bytes_mean_by_kind{};
  double flops_max = 0;
  double flops_total = 0;
  int64_t peak_memory_bytes_max = 0;
  int64_t peak_transfer_bytes_max = 0;      // the transfer-buffer part, busiest GPU
  double time_s = 0;                         // alpha-beta makespan with overlap
  double compute_s_max = 0;
  double comm_s_max = 0;
  double bytes_per_flop = 0;                 // CommCom ratio: bytes received per FLOP, whole schedule
  double comm_over_compute = 0;              // CommCom ratio in time: comm_s_max / compute_s_max
  LowerBound lower_bound;                    // bytes no schedule's busiest receiver gets below (lower_bound.hpp)
  double lower_bound_ratio = 0;              // recv_bytes_max / lower_bound.total_bytes(): at least 1
  TimeLowerBound lower_bound_time;           // the time no schedule beats, priced as time_s is
  double time_over_lower_bound = 0;          // time_s / lower_bound_time.total_s(): at least 1
};

// Transfers take network.transfer_s; without a network, the uniform one of `hardware`.
CostReport cost_schedule(const schedules::CheckedSchedule& checked, const Hardware& hardware,
                         const NetworkModel* network = nullptr);

// What cost_schedule prices one compute or merge op at (its FLOPs at the effective rate plus a
// launch per block; a merge's three passes over memory), for callers that price ops before a
// schedule is checked (time_floor.hpp).
double compute_op_seconds(const Schedule& schedule, const BlockGrid& grid, const Op& op, const Hardware& hardware);

// Ranks sharing devices (P ranks on G devices, device_of_rank[r] the device of rank r): the
// compute of the ranks on one device shares it, k of them delivering concurrency_speedup[k - 1]
// (the last value beyond; empty: 1) times one rank's rate, so a device is busy for its ranks'
// summed compute over speedup(k). The time is the later of the busiest device's compute and
// report.time_s (the schedule's own dependency chain, at one rank per device). A uniform
// network between devices, as report.time_s assumes.
double time_on_shared_devices_s(const CostReport& report, const std::vector<int32_t>& device_of_rank,
                                const std::vector<double>& concurrency_speedup);

}  // namespace tessera::costmodel
