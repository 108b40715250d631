#pragma once
// How much memory a schedule takes, from generation through checking, costing and simulation,
// estimated in closed form from the GPU count, the tile and the pass before anything is
// allocated: a request too large for this machine is refused with the estimate and the limit
// (core/resource_limits.hpp) instead of growing until the allocator throws.
#include <string>

#include "tessera/core/schedule.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::schedules {

// Bytes of a generated, checked, costed and simulated schedule of `algorithm` (the block grid's
// per-block cache, the ops, blocks, items and transfers, the dependency analysis and the
// simulator's state). O(1): no op is generated. Algorithm "file" counts the grid alone (the
// file's own size bounds the rest).
double estimate_schedule_bytes(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options);

// The same for a schedule already in memory (read from a file): the grid and analysis still to
// be built for it, from its real sizes.
double estimate_check_bytes(const Schedule& schedule);

// UserError "ring zigzag on 65536 GPUs needs about 7.3 TB of memory, more than the limit of
// ..." when `concurrent` such schedules at once would exceed the memory limit.
void require_schedule_memory(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                             int concurrent = 1);

}  // namespace tessera::schedules
