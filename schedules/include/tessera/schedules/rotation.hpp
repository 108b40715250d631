#pragma once
// Schedules held by rotation (ProgramForm::rotation in core/schedule.hpp): GPU 0's program
// alone, which GPU g runs with every GPU index and chunk shifted by g. This is exact only where
// every GPU's work is GPU 0's shifted: every chunk holds as many tokens, and the block (i, j)
// has the pairs of (i + g, j + g) for every shift g (a full mask, or a causal one cut zigzag,
// whose off-diagonal blocks are all half full). A ring on such a grid is such a schedule.
#include <cstdint>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"

namespace tessera::schedules {

// Whether shifting both chunks of every block by any g keeps its pairs, and every chunk has
// the same tokens: P² pair counts, read from the grid's table.
bool grid_is_rotation_invariant(const BlockGrid& grid);

// The chunk (or GPU) `index` shifted by `shift`, modulo `gpus`.
inline int32_t rotate(int32_t index, int64_t shift, int32_t gpus) {
  const int64_t value = (static_cast<int64_t>(index) + shift) % gpus;
  return static_cast<int32_t>(value < 0 ? value + gpus : value);
}
inline DataItem rotate(const DataItem& item, int64_t shift, int32_t gpus) {
  return DataItem{item.kind, item.head_group, rotate(item.chunk, shift, gpus)};
}

}  // namespace tessera::schedules
