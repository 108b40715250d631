#include "tessera/schedules/item_sizes.hpp"

#include "tessera/core/data_size.hpp"

namespace tessera::schedules {

ItemSizes::ItemSizes(const Schedule& schedule, const BlockGrid& grid)
    : slots_(schedule), bytes_(item_slot_count(schedule) / 2, 0) {
  Problem one_sequence = schedule.problem;
  one_sequence.batch = 1;
  for (int kind = 0; kind < kDataKindCount; ++kind)
    for (int32_t group = 0; group < schedule.head_groups; ++group)
      for (int32_t chunk = 0; chunk < schedule.chunks(); ++chunk) {
        const DataItem item{static_cast<DataKind>(kind), group, chunk};
        bytes_[slots_(item, false)] =
            item_bytes(one_sequence, schedule.head_groups, grid.chunk_tokens(chunk), item.kind);
      }
}

}  // namespace tessera::schedules
