#pragma once
// What each operation reads and writes, derived from the op itself (compute ops from their
// blocks, collectives from their transfers). The single definition every analysis uses.
#include <cstddef>
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

// Fills `out` (cleared first). Items are deduplicated and sorted.
void op_data(const Schedule& schedule, const Op& op, OpData& out);

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
  size_t head_groups_;
  size_t chunks_;
  size_t half_;
};

}  // namespace tessera::schedules
