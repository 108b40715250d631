#pragma once
// How long a collective lasts in the analytical model, for cost_schedule and for the time floor
// read before a check (time_floor.hpp), which must price it alike.
//
// Ideal algorithm: each member receives (and sends) its pieces one after another, so the
// collective lasts as long as the busiest member's incoming or outgoing transfers; a
// permutation is one concurrent step. On the uniform network an all-gather of pieces of size s
// over m members takes (m - 1)(alpha + s / beta). Per-message costs as NCCL models a
// collective: each step pays its path's latency, the whole operation its overhead once.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/core/network_model.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/cost.hpp"

namespace tessera::costmodel {

class CollectiveClock {
 public:
  explicit CollectiveClock(int32_t gpus)
      : member_s_(static_cast<size_t>(std::max(gpus, 1)), {0.0, 0.0}), listed_(member_s_.size(), 0) {}

  // `item_bytes(item)` gives an item's bytes; `on_item(transfer, item, bytes)` sees each one (the
  // caller's tallies of bytes sent and received). A member's seconds are summed per GPU and
  // cleared after the collective through the list of members it touched (a hash map per
  // collective was 3 % of a sweep of Ulysses and USP points).
  template <class ItemBytes, class OnItem>
  double length_s(const Schedule& schedule, const Collective& collective, const NetworkModel& network,
                  const Hardware& hardware, ItemBytes&& item_bytes, OnItem&& on_item) {
    double longest_s = 0;
    bool leaves_device = false;
    for (const Transfer& transfer : collective.transfers) {
      int64_t transfer_bytes = 0;
      for (const DataItem& item : schedule.items_of(transfer)) {
        const int64_t bytes = item_bytes(item);
        transfer_bytes += bytes;
        on_item(transfer, item, bytes);
      }
      const PathClass path = network.path_class(transfer.src, transfer.dst);
      leaves_device = leaves_device || path != PathClass::local;
      const double seconds = network.transfer_s(transfer.src, transfer.dst, transfer_bytes) + hardware.message.latency_s(path);
      member(transfer.src).first += seconds;
      member(transfer.dst).second += seconds;
      longest_s = std::max(longest_s, seconds);
    }
    double duration_s = longest_s;
    for (const int32_t gpu : touched_) {
      auto& [sending_s, receiving_s] = member_s_[static_cast<size_t>(gpu)];
      if (collective.kind != CollectiveKind::permute) duration_s = std::max({duration_s, sending_s, receiving_s});
      sending_s = receiving_s = 0;
      listed_[static_cast<size_t>(gpu)] = 0;
    }
    touched_.clear();
    if (leaves_device) duration_s += hardware.message.overhead_s;
    return duration_s;
  }

 private:
  std::pair<double, double>& member(int32_t gpu) {
    if (!listed_[static_cast<size_t>(gpu)]) {
      listed_[static_cast<size_t>(gpu)] = 1;
      touched_.push_back(gpu);
    }
    return member_s_[static_cast<size_t>(gpu)];
  }

  std::vector<std::pair<double, double>> member_s_;  // seconds of sending and of receiving
  std::vector<uint8_t> listed_;
  std::vector<int32_t> touched_;
};

}  // namespace tessera::costmodel
