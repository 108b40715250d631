#pragma once
// How long a point-to-point transfer takes between two ranks, with no contention. The cost
// model asks only this; the uniform network answers from two numbers, a routed topology
// (topologies/) from the path: latency per hop and the bandwidth of the narrowest link.
//
// On top of the wire, every message pays what the communication library costs per message
// (MessageCosts): a software overhead, whatever the path, and a protocol latency that depends
// on whether the path stays inside a server (NVLink) or leaves it (the network).
#include <cstdint>

namespace tessera {

// What a path between two ranks is made of, for its per-message latency.
enum class PathClass : uint8_t {
  local,    // both ranks on one device: a device copy, no library message
  nvlink,   // every hop is NVLink (inside one server, through its NVSwitch)
  network,  // any other path: it leaves the server (InfiniBand, or a generic network link)
};

// Per-message costs of a point-to-point transfer (an NCCL send/recv pair), added to the
// wire's latency and bytes / bandwidth. Defaults are NCCL's own cost model for the Simple
// protocol (the one large messages use), from NCCL 2.30 src/graph/tuning.cc
// (ncclTunerConstantsDefaults):
//  - overhead_s: baseLat Ring/Simple, 8.4 us: the fixed cost of one NCCL operation (kernel
//    launch, setup, completion), paid once per message whatever the path;
//  - nvlink_latency_s: hwLat NVLink Ring/Simple, 3.4 us per step inside a server;
//  - network_latency_s: hwLat NET Ring/Simple, 14.0 us per step across the network.
// NCCL adds the topology's own inter-node latency on top of hwLat (graph latencyInter), as
// we add the links' latencies. A calibration file may replace all three (sim/gpu_profile.hpp).
struct MessageCosts {
  static constexpr double kNcclBaseLatencyS = 8.4e-6;
  static constexpr double kNcclNvlinkLatencyS = 3.4e-6;
  static constexpr double kNcclNetworkLatencyS = 14.0e-6;

  double overhead_s = kNcclBaseLatencyS;
  double nvlink_latency_s = kNcclNvlinkLatencyS;
  double network_latency_s = kNcclNetworkLatencyS;

  // No per-message cost at all: the idealised network of closed-form checks.
  static MessageCosts none() { return MessageCosts{0, 0, 0}; }
  double latency_s(PathClass path) const {
    return path == PathClass::local ? 0 : path == PathClass::nvlink ? nvlink_latency_s : network_latency_s;
  }
  // One whole message: its overhead and its path's latency (a device copy pays neither).
  double message_s(PathClass path) const { return path == PathClass::local ? 0 : overhead_s + latency_s(path); }
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  // The wire: link latencies plus bytes over the narrowest link.
  virtual double transfer_s(int32_t src_rank, int32_t dst_rank, int64_t bytes) const = 0;
  // Which per-message latency the path pays. A network that knows nothing of servers is one.
  virtual PathClass path_class(int32_t /*src_rank*/, int32_t /*dst_rank*/) const { return PathClass::network; }
};

// Every GPU pair has its own link of one latency and bandwidth; the paths count as network
// paths (the default hardware is 400 Gb/s InfiniBand per GPU).
class UniformNetwork final : public NetworkModel {
 public:
  UniformNetwork(double latency_s, double bytes_per_s) : latency_s_(latency_s), bytes_per_s_(bytes_per_s) {}
  double transfer_s(int32_t, int32_t, int64_t bytes) const override {
    return latency_s_ + static_cast<double>(bytes) / bytes_per_s_;
  }

 private:
  double latency_s_;
  double bytes_per_s_;
};

}  // namespace tessera
