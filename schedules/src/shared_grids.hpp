#pragma once
// The block grid of a problem, shared by every generator that asks for the same one while any
// holder keeps it. A plan's candidates each counted the same grid's pairs into a grid of their
// own: at 1,024 GPUs, a million blocks per candidate, 42 times (4 % of `plan --gpus 1024 --model
// analytic`, and 8 MB of fresh pages each). A shared grid is counted whole before it is handed
// out (BlockGrid::total_pairs fills every block), so the threads that read it at once never
// write its cache of counted pairs; held only by its users (weak references to the last few
// made here), it is freed with the last of them.
#include <cstdint>
#include <memory>

#include "tessera/core/block_grid.hpp"

namespace tessera::schedules {

std::shared_ptr<const BlockGrid> shared_grid(const Problem& problem, Layout layout, int64_t chunks);

}  // namespace tessera::schedules
