#pragma once
// Flows over shared resources (link directions) with max-min fair rates, the fluid model of
// research/simulators.md 4: progressive filling over the flows a change can affect (those
// connected to it through shared resources), not over the whole network. Changes made at one
// instant (many flows starting together, as in a collective) are shared out once, when the
// next completion is asked for. Components are independent (each touches only its own flows
// and resources), so sharing out some of them gives, bit for bit, the rates a sharing of the
// whole network would (reshare_all(), the tests' reference). A resource whose flows cross
// nothing else, every step of a ring, is shared out directly, without the fair-share heap.
// Predicted completions are queued by instant (min_queue.hpp), at one instant by flow id.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "tessera/sim/min_queue.hpp"

namespace tessera::sim {

class FlowNetwork {
 public:
  explicit FlowNetwork(std::vector<double> capacity_bytes_per_s);

  // Starts a flow of `bytes` over `resources` at time now_s; returns its id.
  int32_t start(std::span<const int32_t> resources, double bytes, double now_s);
  // The next flow to run out of bytes (time, id), or (infinity, -1) when none is active.
  std::pair<double, int32_t> next_completion();
  // Retires a completed flow at now_s (its time from next_completion()).
  void finish(int32_t flow, double now_s);

  size_t active_flows() const { return active_count_; }
  // Per resource: bytes carried and time with at least one flow on it (up to the last change).
  const std::vector<double>& carried_bytes() const { return carried_bytes_; }
  const std::vector<double>& busy_s() const { return busy_s_; }
  double rate(int32_t flow) {
    flush();
    return flows_[static_cast<size_t>(flow)].rate;
  }
  // Shares out every active flow again at now_s, as if all had changed: the from-scratch
  // reference that the sharing of changed components alone is tested against.
  void reshare_all(double now_s);

 private:
  struct Flow {
    std::vector<int32_t> resources;
    double remaining_bytes = 0;
    double rate = 0;
    double updated_s = 0;
    uint32_t version = 0;
    bool active = false;
  };
  // A predicted completion, queued at its time; stale once the flow's version has moved on.
  // Flow and version in one word: at one instant, completions leave by flow (one comparison).
  struct Completion {
    uint64_t flow_version;
    Completion(int32_t flow, uint32_t version)
        : flow_version(static_cast<uint64_t>(static_cast<uint32_t>(flow)) << 32 | version) {}
    int32_t flow() const { return static_cast<int32_t>(flow_version >> 32); }
    uint32_t version() const { return static_cast<uint32_t>(flow_version); }
    bool operator>(const Completion& other) const { return flow_version > other.flow_version; }
  };
  void advance(Flow& flow, double now_s);
  void touch_resource(int32_t resource, double now_s);
  void reshare(std::span<const int32_t> seeds, double now_s);
  void flush();  // reshare around everything changed since the last flush
  std::pair<double, int32_t> valid_top();

  std::vector<double> capacity_;
  std::vector<std::vector<int32_t>> flows_on_;  // active flows per resource
  std::vector<double> carried_bytes_;
  std::vector<double> busy_s_;
  std::vector<double> resource_updated_s_;
  std::vector<Flow> flows_;
  std::vector<int32_t> free_ids_;
  size_t active_count_ = 0;
  SortedInstantQueue<Completion> completions_;  // at one instant, by flow
  // Scratch for reshare (kept to avoid reallocating).
  std::vector<uint32_t> resource_mark_, flow_mark_;
  uint32_t epoch_ = 0;
  std::vector<int32_t> component_resources_, component_flows_;
  std::vector<double> remaining_capacity_;
  std::vector<int32_t> dirty_resources_, seeds_;
  MinQueue<std::pair<double, int32_t>> shares_;  // the filling's (share, resource); empty between calls
  double dirty_s_ = 0;
  std::vector<int32_t> unfrozen_count_;
};

}  // namespace tessera::sim
