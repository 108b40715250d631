#pragma once
// One run of the GUI's pipeline, off the GUI thread: parse the session's text fields,
// generate and check the schedule, build the network and place the ranks, route the traffic
// (bytes per link), simulate, cost every candidate schedule of the problem for the Compare
// view. scenario::evaluate and scenario::plan, as `tessera simulate` and `tessera plan
// --model analytic` call them.
// No Qt here beyond the session type: the result is plain data the models read.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/session.hpp"
#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/scenario/evaluate.hpp"

namespace tessera::gui {

// One schedule of the problem, costed by the analytical model on the same network.
struct CompareRow {
  std::string label;                 // "mesh 8x8", "ring zigzag", ...
  double time_s = 0;                 // alpha-beta makespan over the routed network
  int64_t recv_bytes_max = 0;        // bytes received by the busiest GPU
  int64_t peak_memory_bytes_max = 0; // peak buffer memory of the fullest GPU
  bool is_current = false;           // the schedule shown in the other views
};

struct ScenarioResult {
  Session session;
  Schedule schedule;
  std::shared_ptr<const BlockGrid> grid;
  schedules::ScheduleAnalysis analysis;
  topo::Topology topology;
  std::vector<int32_t> placement;   // schedule rank -> topology GPU
  topo::LinkLoads link_loads;       // bytes per directed edge, routed
  sim::GpuProfile gpu;
  sim::SimResult sim;
  costmodel::CostReport cost;                  // analytical, for the summary line
  std::vector<CompareRow> compare;
  std::vector<std::string> compare_skipped;  // "ulysses: heads 32 not divisible by 64 GPUs"
  double wall_s = 0;                         // how long the whole run took
};

// Thrown when the run was cancelled between two phases.
class RunCancelled : public std::runtime_error {
 public:
  RunCancelled() : std::runtime_error("cancelled") {}
};

struct RunControl {
  // Checked between phases, between compare candidates, and by the simulator every few
  // thousand events (a cancelled simulation stops where it is).
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(int percent, const std::string& phase)> progress;
  bool compare = true;  // cost every candidate schedule for the Compare view
};

// The most GPUs the views are made for (an n x n grid, one timeline band per GPU).
inline constexpr int32_t kMaxGpus = 1024;

// Throws UserError for bad or impossible parameters (the message names the field), and
// RunCancelled. Anything else is a bug in a library.
std::shared_ptr<const ScenarioResult> run_scenario(const Session& session, const RunControl& control = {});

}  // namespace tessera::gui
