#include "tessera/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "critical_path.hpp"
#include "schedule_run.hpp"
#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/resource_limits.hpp"
#include "tessera/sim/collective_expansion.hpp"
#include "topology_links.hpp"

namespace tessera::sim {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Per engine task (a message, a chunk of one, a step of a collective): the task, its
// dependency links, its flow and event (simulate of a ring on 128 GPUs: 33 MB peak for ~150k
// ops and tasks, with the schedule); per op, the run's own state and the result's times.
constexpr double kBytesPerTask = 150;
constexpr double kBytesPerOp = 60;

// The engine tasks a run will create, counted from the schedule before any is: with
// --chunk every message is ceil(bytes / chunk) tasks, so a small chunk multiplies them.
double simulation_tasks(const schedules::CheckedSchedule& checked, const SimOptions& options) {
  const Schedule& schedule = checked.schedule();
  double tasks = 0;
  for (const Op& op : schedule.ops) {
    if (op.kind != OpKind::send) continue;
    double bytes = 0;
    for (const DataItem& item : schedule.items_of(op))
      bytes += static_cast<double>(item_bytes(schedule, checked.grid(), item));
    tasks += options.chunk_bytes > 0 && bytes > options.chunk_bytes ? std::ceil(bytes / options.chunk_bytes) : 1;
  }
  for (const Collective& collective : schedule.collectives) {
    const auto members = static_cast<int32_t>(collective.members.size());
    tasks += runs_as_ring(collective.kind) ? static_cast<double>(ring_steps(collective.kind, members)) * members
                                           : static_cast<double>(collective.transfers.size());
  }
  return tasks;
}

// Every op must have finished: a checked schedule cannot deadlock.
void require_all_finished(const Schedule& schedule, const SimResult& result) {
  for (size_t index = 0; index < schedule.ops.size(); ++index)
    if (result.op_finish_s[index] == kInfinity)
      throw std::runtime_error("simulation stalled at " + schedule.describe(schedule.ops[index]) +
                               " (the schedule should have been checked first)");
}

// Finish times, exposed waits, receive bounds and the schedule-quality lower bound.
void summarize_gpus(const Schedule& schedule, const topo::Topology& topology, const std::vector<int32_t>& placement,
                    const std::vector<double>& received_bytes, SimResult& result) {
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    GpuTimes& times = result.gpus[static_cast<size_t>(schedule.ops[index].gpu)];
    times.finish_s = std::max(times.finish_s, result.op_finish_s[index]);
    result.makespan_s = std::max(result.makespan_s, result.op_finish_s[index]);
  }
  for (auto& times : result.gpus) times.exposed_wait_s = std::max(0.0, times.finish_s - times.compute_s);
  for (int32_t rank = 0; rank < schedule.gpus; ++rank) {
    GpuTimes& times = result.gpus[static_cast<size_t>(rank)];
    times.received_bytes = received_bytes[static_cast<size_t>(rank)];
    const double ingress_bytes_per_s = links::ingress_bytes_per_s(topology, placement[static_cast<size_t>(rank)]);
    times.receive_bound_s = ingress_bytes_per_s > 0 ? times.received_bytes / ingress_bytes_per_s : 0;
    result.lower_bound_s = std::max({result.lower_bound_s, times.compute_s, times.receive_bound_s});
  }
}

void summarize_links(const topo::Topology& topology, const Engine& engine, SimResult& result) {
  const std::vector<double>& capacity = topology.resource_bytes_per_s;
  result.resources.assign(capacity.size(), LinkStats{});
  for (size_t r = 0; r < capacity.size(); ++r) {
    LinkStats& stats = result.resources[r];
    stats.bytes = engine.carried_bytes()[r];
    stats.busy_s = engine.busy_s()[r];
    stats.utilization = result.makespan_s > 0 ? stats.bytes / (capacity[r] * result.makespan_s) : 0;
  }
}
}  // namespace

SimResult simulate(const schedules::CheckedSchedule& checked, const topo::Topology& topology,
                   const std::vector<int32_t>& placement, const GpuProfile& gpu, const SimOptions& options) {
  const Schedule& schedule = checked.schedule();
  require_full_program(schedule, "simulate");
  if (placement.size() < static_cast<size_t>(schedule.gpus))
    throw UserError("the placement covers " + std::to_string(placement.size()) + " ranks but the schedule has " +
                    std::to_string(schedule.gpus));
  const double tasks = simulation_tasks(checked, options);
  char messages[64];
  std::snprintf(messages, sizeof messages, "%.3g messages%s", tasks, options.chunk_bytes > 0 ? " with --chunk" : "");
  require_memory(kBytesPerTask * tasks + kBytesPerOp * static_cast<double>(schedule.ops.size()),
                 "simulating " + schedule.name() + " on " + std::to_string(schedule.gpus) + " GPUs (" + messages + ")");
  SimResult result;
  result.op_start_s.assign(schedule.ops.size(), kInfinity);
  result.op_finish_s.assign(schedule.ops.size(), kInfinity);
  result.gpus.assign(static_cast<size_t>(schedule.gpus), GpuTimes{});

  ScheduleRun run(checked, topology, placement, gpu, options, result);
  run.run();
  require_all_finished(schedule, result);
  result.transfers = run.engine().task_count();
  result.events = run.engine().event_count();
  summarize_gpus(schedule, topology, placement, run.engine().received_bytes(), result);
  summarize_links(topology, run.engine(), result);
  result.critical_path = critical_path(schedule, checked.analysis(), result.op_finish_s);
  return result;
}

}  // namespace tessera::sim
