#pragma once
// The simulator: executes a checked schedule over a topology. The schedule is expanded into
// tasks for the engine (engine.hpp): each op starts when its dependencies are done (its
// stream's previous op among them); compute ops take the GPU model's time; a send and its recv
// start one transfer when both are ready, routed over the topology; collectives start their
// algorithm's transfers (collective_expansion.hpp). Deterministic: events are ordered by time,
// then by insertion. Fidelity levels (engine.hpp) change how transfers share links, not what
// comes out.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/network_model.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

struct SimOptions {
  Fidelity fidelity = Fidelity::flow;
  // Per-message costs, on top of the route's link latencies and bytes / bandwidth. Defaults:
  // NCCL's own cost model (core/network_model.hpp names the source). A point-to-point
  // message (each chunk of one, with chunk_bytes) pays the overhead and its path's latency; a
  // collective pays the overhead once and each algorithm step its path's latency. Paths within
  // one device pay nothing. A calibration file replaces them (sim/gpu_profile.hpp).
  double message_overhead_s = MessageCosts::kNcclBaseLatencyS;
  double nvlink_message_latency_s = MessageCosts::kNcclNvlinkLatencyS;    // every hop NVLink
  double network_message_latency_s = MessageCosts::kNcclNetworkLatencyS;  // any other path
  int32_t channels = 0;           // > 0: at most this many transfers move data into, and out of,
                                  // each GPU at once; later ones queue (FIFO) for a free channel
  double chunk_bytes = 0;         // > 0: point-to-point messages go as chunks of this size, one
                                  // after another, each paying latency and overhead
  // Set from another thread to stop a simulation early: simulate() then throws
  // SimulationCancelled (checked every few thousand events, so front ends stay responsive).
  const std::atomic<bool>* cancel = nullptr;
  // Ranks sharing devices: when set, ranks the placement puts on one topology GPU share its
  // compute (processor sharing with the calibrated concurrency curve) and copy between each
  // other at its copy bandwidth (shared_devices.hpp); P ranks then run on G < P devices.
  // Unset: a placement puts one rank per GPU, each computing alone.
  std::optional<DeviceSharing> device_sharing;

  MessageCosts message_costs() const {
    return MessageCosts{message_overhead_s, nvlink_message_latency_s, network_message_latency_s};
  }
  void set_message_costs(const MessageCosts& costs) {
    message_overhead_s = costs.overhead_s;
    nvlink_message_latency_s = costs.nvlink_latency_s;
    network_message_latency_s = costs.network_latency_s;
  }
};

struct GpuTimes {
  double compute_s = 0;       // busy time of compute and merge ops
  double communication_s = 0; // time with at least one of its transfers in flight
  double exposed_wait_s = 0;  // finish - compute: when the GPU is not computing
  double finish_s = 0;
  double received_bytes = 0;
  // The least time its incoming bytes need through all the links into it at full speed.
  double receive_bound_s = 0;
};

struct LinkStats {
  double bytes = 0;
  double busy_s = 0;
  double utilization = 0;  // bytes / (capacity x makespan)
};

struct SimResult {
  double makespan_s = 0;
  std::vector<double> op_start_s, op_finish_s;
  std::vector<GpuTimes> gpus;
  std::vector<LinkStats> resources;  // per topology resource (link direction or shared cable)
  std::vector<uint32_t> critical_path;  // op indices, first to last
  // Schedule quality: no schedule can beat the busiest GPU's compute, nor the time its
  // incoming bytes need at the full bandwidth of its links.
  double lower_bound_s = 0;
  size_t transfers = 0;
  size_t events = 0;
};

// `placement[rank]` is the topology GPU of each schedule rank.
SimResult simulate(const schedules::CheckedSchedule& checked, const topo::Topology& topology,
                   const std::vector<int32_t>& placement, const GpuProfile& gpu, const SimOptions& options);

// Seconds a compute or merge op takes on `gpu`.
double op_compute_s(const Schedule& schedule, const BlockGrid& grid, const Op& op, const GpuProfile& gpu);

}  // namespace tessera::sim
