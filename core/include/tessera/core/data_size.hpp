#pragma once
// Bytes of each data item. Activations and gradients are in the problem's dtype; softmax
// statistics are fp32: LSE is one float per (token, head), Stats (backward: LSE and the
// rowsum delta = sum(dO * O)) two.
#include <cstdint>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"

namespace tessera {

int64_t item_bytes(const Problem& problem, int32_t head_groups, int64_t chunk_tokens, DataKind kind);

inline int64_t item_bytes(const Schedule& schedule, const BlockGrid& grid, const DataItem& item) {
  return item_bytes(schedule.problem, schedule.head_groups, grid.chunk_tokens(item.chunk), item.kind);
}

}  // namespace tessera
