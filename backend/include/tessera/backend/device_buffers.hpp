#pragma once
// What a device executor must hold, derived from the schedule before anything is allocated:
// the size of every data item's buffer, and the bytes each rank needs at most. A run that does
// not fit is refused with these numbers instead of failing halfway through allocation.
//
// Buffers per data item (kind, head group, chunk), rows = the chunk's tokens, Hg query heads
// and Gg key/value heads per head group:
//   Q   rows x Hg x d  (input dtype)          dO    rows x Hg x dv (input dtype)
//   KV  rows x Gg x (d + dv) (input dtype)    Stats rows x Hg x 2 (fp32: LSE and delta)
//   O   rows x Hg x (dv + 1) (fp32: O and its LSE; an LSE item rides with its O)
//   dQ  rows x Hg x d (fp32)                  dKV   rows x Gg x (d + dv) (fp32)
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"

namespace tessera::backend {

// The tokens of a chunk in row order (how its rows map to sequence positions).
std::vector<int64_t> chunk_token_list(const BlockGrid& grid, int64_t chunk);

// Global index of the first key/value head a head group holds (its KV buffer's head 0). With
// more groups than KV heads each group holds one, replicated, head.
int64_t first_kv_head_of_group(const Problem& problem, int32_t head_groups, int32_t group);

int64_t device_item_bytes(const Schedule& schedule, const BlockGrid& grid, const DataItem& item);

struct DeviceMemoryPlan {
  std::vector<int64_t> rank_bytes;  // per rank: its own inputs, everything it receives, its partials
  int64_t total_bytes = 0;          // all ranks together (what one GPU needs for virtual ranks)
  int64_t largest_rank_bytes = 0;   // what one GPU needs with one rank per GPU
};

// An upper bound: every buffer a rank ever holds, counted as if none were freed (received inputs
// are kept until the end; each accumulator counts once locally and once per inbox arrival).
DeviceMemoryPlan plan_device_memory(const Schedule& schedule, const BlockGrid& grid);

}  // namespace tessera::backend
