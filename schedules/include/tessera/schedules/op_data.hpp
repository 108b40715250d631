#pragma once
// What each operation reads and writes, derived from the op itself (compute ops from their
// blocks, collectives from their transfers). The single definition every analysis uses.
#include <cstddef>
#include <span>
#include <vector>

#include "tessera/core/schedule.hpp"

namespace tessera::schedules {

// Accumulator kinds live in two places on a GPU: the local partial sum that compute adds
// into, and the inbox that receives partials from peers until a merge folds them in. Keeping
// them apart keeps an arriving partial from waiting on local compute of the same rows.
struct OpData {
  std::vector<DataItem> reads;
  std::vector<DataItem> writes;
  std::vector<DataItem> inbox_reads;   // merge: partials received earlier
  std::vector<DataItem> inbox_writes;  // recv / collective: partials arriving
};

// Each collective's transfers by the GPU that sends them and by the GPU that receives them, so
// that a member's op_data visits its own transfers, not all of them: an all-to-all has P^2
// transfers and P members, and the full scan per member was a twentieth of a plan's time.
class CollectiveTransfers {
 public:
  explicit CollectiveTransfers(const Schedule& schedule);
  // Indices into the collective's transfers, in increasing order.
  std::span<const uint32_t> sent_by(size_t collective, int32_t gpu) const { return find(sent_[collective], gpu); }
  std::span<const uint32_t> received_by(size_t collective, int32_t gpu) const { return find(received_[collective], gpu); }

 private:
  // Per collective, the GPUs that appear (sorted), each with its range of `transfers`.
  struct ByGpu {
    std::vector<int32_t> gpus;
    std::vector<uint32_t> offsets;  // gpus.size() + 1
    std::vector<uint32_t> transfers;
  };
  static std::span<const uint32_t> find(const ByGpu& table, int32_t gpu);
  std::vector<ByGpu> sent_, received_;
};

// Fills `out` (cleared first). Items are deduplicated and sorted. With `transfers` (made for
// this schedule), a collective op visits only its GPU's transfers; the lists are the same.
void op_data(const Schedule& schedule, const Op& op, OpData& out, const CollectiveTransfers* transfers = nullptr);

// A dense index for the per-GPU tables of the analyses: every (item, local or inbox) of one
// GPU gets its own slot in [0, item_slot_count(schedule)), so they need no hashing.
inline size_t item_slot_count(const Schedule& schedule) {
  return static_cast<size_t>(2) * kDataKindCount * static_cast<size_t>(schedule.head_groups) *
         static_cast<size_t>(schedule.chunks());
}
inline size_t item_slot(const Schedule& schedule, const DataItem& item, bool inbox) {
  const size_t index =
      (static_cast<size_t>(item.kind) * static_cast<size_t>(schedule.head_groups) + static_cast<size_t>(item.head_group)) *
          static_cast<size_t>(schedule.chunks()) +
      static_cast<size_t>(item.chunk);
  return inbox ? index + item_slot_count(schedule) / 2 : index;
}

// item_slot with the schedule's sizes copied in, as 64-bit values: a loop that stores into a
// 32-bit table (which may alias the schedule's int32 fields) would otherwise reload them from
// the schedule at every access. Copy it into a local (or capture it by value) where that matters.
class ItemSlots {
 public:
  ItemSlots() = default;
  explicit ItemSlots(const Schedule& schedule)
      : head_groups_(static_cast<size_t>(schedule.head_groups)),
        chunks_(static_cast<size_t>(schedule.chunks())),
        half_(item_slot_count(schedule) / 2) {}
  size_t operator()(const DataItem& item, bool inbox) const {
    const size_t index =
        (static_cast<size_t>(item.kind) * head_groups_ + static_cast<size_t>(item.head_group)) * chunks_ +
        static_cast<size_t>(item.chunk);
    return inbox ? index + half_ : index;
  }

 private:
  size_t head_groups_ = 0;
  size_t chunks_ = 0;
  size_t half_ = 0;
};

}  // namespace tessera::schedules
