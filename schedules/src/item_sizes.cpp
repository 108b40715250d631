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

double op_pairs(const Schedule& schedule, const BlockGrid& grid, const Op& op) {
  if (op.kind != OpKind::compute) return 0;
  double pairs = 0;
  for (const auto& block : schedule.blocks_of(op)) pairs += static_cast<double>(grid.pairs(block.q_chunk, block.kv_chunk));
  return pairs;
}

std::vector<double> op_pairs_table(const Schedule& schedule, const BlockGrid& grid) {
  std::vector<double> table(schedule.ops.size());
  for (size_t index = 0; index < schedule.ops.size(); ++index) table[index] = op_pairs(schedule, grid, schedule.ops[index]);
  return table;
}

}  // namespace tessera::schedules
