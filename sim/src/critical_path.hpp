#pragma once
// The chain of ops that set a simulated makespan.
#include <cstdint>
#include <span>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/schedules/analysis.hpp"

namespace tessera::sim {

// From the last op to finish back through, at each step, whichever op it waited for finished
// last (for a transfer, the waits of its other side and of every collective member count
// too). Op indices, first to last; empty without ops.
std::vector<uint32_t> critical_path(const Schedule& schedule, const schedules::ScheduleAnalysis& analysis,
                                    std::span<const double> op_finish_s);

}  // namespace tessera::sim
