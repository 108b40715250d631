#pragma once
// How long a point-to-point transfer takes between two ranks, with no contention. The cost
// model asks only this; the uniform network answers from two numbers, a routed topology
// (topologies/) from the path: latency per hop and the bandwidth of the narrowest link.
#include <cstdint>

namespace tessera {

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual double transfer_s(int32_t src_rank, int32_t dst_rank, int64_t bytes) const = 0;
};

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
