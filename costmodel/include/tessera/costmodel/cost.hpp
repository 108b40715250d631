#pragma once
// The analytical cost of a schedule on a uniform network: bytes by data kind, FLOPs, peak
// buffer memory, the CommCom ratio, an alpha-beta time with compute/communication overlap,
// and the communication lower bound of research/peers.md 5.2. Pure functions, no I/O.
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/analysis.hpp"
#include "tessera/costmodel/network_model.hpp"

namespace tessera {

// A GPU and a uniform network: every GPU pair has its own link of this latency and bandwidth
// (SI units: 1 GB/s = 1e9 B/s). Defaults: H100 SXM (989 TFLOP/s dense bf16 at 60 %, 3.35 TB/s
// HBM) and 400 Gb/s InfiniBand per GPU (50 GB/s, 5 us).
struct Hardware {
  double peak_flops_per_s = 989e12;
  double compute_efficiency = 0.6;
  double hbm_bytes_per_s = 3.35e12;
  double link_bytes_per_s = 50e9;
  double link_latency_s = 5e-6;
  double effective_flops_per_s() const { return peak_flops_per_s * compute_efficiency; }
};

using BytesByKind = std::array<int64_t, kDataKindCount>;

struct GpuCost {
  BytesByKind sent_bytes{};
  BytesByKind received_bytes{};
  double flops = 0;
  int64_t peak_memory_bytes = 0;
  double compute_s = 0;  // busy time of the compute stream
  double comm_s = 0;     // time this GPU's incoming transfers and collectives take
  double finish_s = 0;   // when its last op ends
  int64_t received_total() const;
  int64_t sent_total() const;
};

// Per-GPU communication lower bound (bytes received) for schedules that do not split heads.
struct LowerBound {
  double forward_bytes = 0;
  double backward_bytes = 0;
  double total_bytes() const { return forward_bytes + backward_bytes; }
};
LowerBound communication_lower_bound(const Problem& problem, int32_t gpus, const BlockGrid& grid);

struct CostReport {
  std::vector<GpuCost> gpus;
  int64_t recv_bytes_max = 0;                // most bytes received by one GPU
  std::array<double, kDataKindCount> recv_bytes_mean_by_kind{};
  double flops_max = 0;
  double flops_total = 0;
  int64_t peak_memory_bytes_max = 0;
  double time_s = 0;                         // alpha-beta makespan with overlap
  double compute_s_max = 0;
  double comm_s_max = 0;
  double bytes_per_flop = 0;                 // CommCom ratio: bytes received per FLOP, whole schedule
  double comm_over_compute = 0;              // CommCom ratio in time: comm_s_max / compute_s_max
  LowerBound lower_bound;
  double lower_bound_ratio = 0;              // recv_bytes_max / lower bound (below 1 only when heads are split)
};

// The analysis must come from a successful check (it needs a complete execution order).
// Transfers take network.transfer_s; without a network, the uniform one of `hardware`.
CostReport cost_schedule(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
                         const Hardware& hardware, const NetworkModel* network = nullptr);

}  // namespace tessera
