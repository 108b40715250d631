#pragma once
// Memory per GPU over a schedule's run: what it holds throughout (its own chunks' inputs and
// outputs) and the most it holds on top of that at once (received inputs, partials of other GPUs'
// chunks, arriving partials), walking each GPU's ops in the step order of the analysis.
//
// Made for one sequence per batch, once per checked schedule (check_schedule keeps it in the
// analysis): every item's bytes are the batch times one sequence's, exactly (item_bytes is a
// product of integers, data_size.hpp), so every sum and maximum here scales by the batch
// exactly too, and the cost model multiplies instead of walking millions of accesses again for
// every batch size and network point that shares the schedule.
#include <cstdint>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/schedules/analysis.hpp"

namespace tessera::schedules {

// One entry per GPU, at one sequence per batch, whatever schedule.problem.batch is. Reads the
// item sizes and the order of the analysis (both made by check_schedule before it). Lists
// accesses through `listed` (made for this schedule; analysis.hpp), which the check shares with
// its dependency walk.
std::vector<GpuMemory> memory_per_gpu_one_sequence(const Schedule& schedule, const ScheduleAnalysis& analysis,
                                                   OpAccesses& listed);

}  // namespace tessera::schedules
