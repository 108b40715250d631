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
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/analysis.hpp"

namespace tessera::schedules {

struct CheckResult {
  std::string violation;  // empty when the schedule is valid
  ScheduleAnalysis analysis;
  bool ok() const { return violation.empty(); }
};

// The diagnostic: the first violation in words (empty when valid) and the analysis.
CheckResult check_schedule(const Schedule& schedule, const BlockGrid& grid);

// A schedule the checker accepted, with the block grid and the analysis that every consumer
// (cost model, link loads, simulator, executors) reads. Only check() makes one, so a function
// that takes a CheckedSchedule cannot be handed a schedule nobody checked. It is immutable;
// copies share one schedule, grid and analysis.
class CheckedSchedule {
 public:
  const Schedule& schedule() const { return *schedule_; }
  const BlockGrid& grid() const { return *grid_; }
  const ScheduleAnalysis& analysis() const { return *analysis_; }
  // The grid alone, for views that outlive this object (the GUI's models).
  std::shared_ptr<const BlockGrid> shared_grid() const { return grid_; }

 private:
  friend CheckedSchedule check(Schedule schedule, std::shared_ptr<const BlockGrid> grid);
  friend CheckedSchedule with_batch(const CheckedSchedule& checked, int64_t batch);
  friend std::optional<CheckedSchedule> held_at_period(const CheckedSchedule& checked, int32_t period);
  CheckedSchedule(std::shared_ptr<const Schedule> schedule, std::shared_ptr<const BlockGrid> grid,
                  std::shared_ptr<const ScheduleAnalysis> analysis)
      : schedule_(std::move(schedule)), grid_(std::move(grid)), analysis_(std::move(analysis)) {}
  std::shared_ptr<const Schedule> schedule_;
  std::shared_ptr<const BlockGrid> grid_;
  std::shared_ptr<const ScheduleAnalysis> analysis_;
};

// What check() throws for a schedule the checker rejects; what() is the violation.
struct InvalidSchedule : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Builds the schedule's block grid, checks it, and returns it checked or throws InvalidSchedule.
CheckedSchedule check(Schedule schedule);
// The same on a grid already made (a generator's), when it is the schedule's: same problem,
// layout and chunks; otherwise a grid of its own. Its pair counts (one closed form per block,
// a million blocks at 1024 GPUs) are then made once, not once per grid.
CheckedSchedule check(Schedule schedule, std::shared_ptr<const BlockGrid> grid);

// The checked schedule of the same ops for a batch of `batch` sequences, without generating or
// checking again: the batch scales every item's bytes and every block's FLOPs, which the cost
// model and the simulator take from schedule().problem, and no op, block, dependency or check
// depends on it. So this equals generating at that batch wherever the generator does not read
// the batch (every generator but Mesh's planner, which prices tiles by bytes and FLOPs: see
// generator_reads_batch). The analysis is shared; the schedule is a copy that shares its ops,
// blocks, items and collectives (core/shared_vector.hpp), and the grid is a copy.
CheckedSchedule with_batch(const CheckedSchedule& checked, int64_t batch);

}  // namespace tessera::schedules
