#pragma once
// The schedule checker. A schedule is valid when
//  - every block with work is computed exactly once per pass, and no fully masked block is;
//  - every recv is matched by a send of the same data, every collective reached by all members;
//  - every op's data is present before it runs (in program order, through dependencies);
//  - it cannot deadlock under rendezvous semantics;
//  - at the end each output (O and LSE forward; dQ and dKV backward) sits complete on its
//    owner: its partials cover every block of its row (or column) exactly once, and no partial
//    is left anywhere else.
// The first violation is reported in words.
#include <string>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/analysis.hpp"

namespace tessera {

struct CheckResult {
  std::string violation;  // empty when the schedule is valid
  ScheduleAnalysis analysis;
  bool ok() const { return violation.empty(); }
};

CheckResult check_schedule(const Schedule& schedule, const BlockGrid& grid);

}  // namespace tessera
