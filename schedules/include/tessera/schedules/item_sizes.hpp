#pragma once
// The bytes of every data item of a schedule at one sequence per batch, in one table made once
// per checked schedule and kept in its analysis (analysis.hpp); and the work of each compute op
// at one sequence, likewise.
//
// Every item's bytes are the batch times one sequence's, exactly (item_bytes is a product of
// integers, data_size.hpp), so the memory walk (memory_peak.hpp) sums this table's entries and
// the cost model multiplies them by the batch: a sweep over batch sizes, which shares one check
// across them (scenario/schedule_cache.hpp), makes each item's size once, not at every point.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/op_data.hpp"

namespace tessera::schedules {

class ItemSizes {
 public:
  ItemSizes() = default;
  // Every (kind, head group, chunk) of the schedule, whatever schedule.problem.batch is.
  ItemSizes(const Schedule& schedule, const BlockGrid& grid);

  int64_t one_sequence_bytes(const DataItem& item) const { return bytes_[slots_(item, false)]; }
  size_t table_bytes() const { return bytes_.capacity() * sizeof(int64_t); }

 private:
  ItemSlots slots_;
  std::vector<int64_t> bytes_;  // indexed by the item's local slot (op_data.hpp)
};

// Unmasked (query, key) pairs of one head and one sequence that an op computes: the sum of its
// blocks' pairs (0 for an op that computes nothing). Its FLOPs are this times the batch, the
// heads of its group and the FLOPs per pair of its pass.
double op_pairs(const Schedule& schedule, const BlockGrid& grid, const Op& op);

// op_pairs of every op, as check_schedule keeps it in the analysis for a schedule of at most
// kOpPairsTableMaxOps ops: a sweep costs one such schedule at every batch size and network
// point that shares it, and summing each op's blocks again every time was a twelfth of a sweep's
// instructions. A larger schedule (thousands of GPUs) is costed a few times at most, where the
// table's 8 bytes per op would cost memory and save nothing: it gets none, and the cost model
// sums the blocks.
inline constexpr size_t kOpPairsTableMaxOps = size_t{1} << 20;
std::vector<double> op_pairs_table(const Schedule& schedule, const BlockGrid& grid);

}  // namespace tessera::schedules
