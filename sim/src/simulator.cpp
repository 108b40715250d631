#include "tessera/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "critical_path.hpp"
#include "rotation_resources.hpp"
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

// Held by rotation, what the held transfers bring to GPUs past the period, their shifted
// copies bring to the held GPUs: each GPU receives its held GPU's sum.
std::vector<double> received_per_gpu(const Schedule& schedule, std::vector<double> received) {
  if (schedule.form != ProgramForm::rotation) return received;
  const auto period = static_cast<size_t>(schedule.period);
  for (size_t rank = period; rank < received.size(); ++rank) received[rank % period] += received[rank];
  for (size_t rank = period; rank < received.size(); ++rank) received[rank] = received[rank % period];
  return received;
}

// Finish times, exposed waits, receive bounds and the schedule-quality lower bound. Held by
// rotation, GPU g's times are GPU (g mod period)'s: its copies run at the same moments.
void summarize_gpus(const Schedule& schedule, const topo::Topology& topology, const std::vector<int32_t>& placement,
                    const std::vector<double>& received_bytes, SimResult& result) {
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    GpuTimes& times = result.gpus[static_cast<size_t>(schedule.ops[index].gpu)];
    times.finish_s = std::max(times.finish_s, result.op_finish_s[index]);
    result.makespan_s = std::max(result.makespan_s, result.op_finish_s[index]);
  }
  if (schedule.form == ProgramForm::rotation)
    for (size_t rank = static_cast<size_t>(schedule.period); rank < result.gpus.size(); ++rank)
      result.gpus[rank] = result.gpus[rank % static_cast<size_t>(schedule.period)];
  for (auto& times : result.gpus) times.exposed_wait_s = std::max(0.0, times.finish_s - times.compute_s);
  for (int32_t rank = 0; rank < schedule.gpus; ++rank) {
    GpuTimes& times = result.gpus[static_cast<size_t>(rank)];
    times.received_bytes = received_bytes[static_cast<size_t>(rank)];
    const double ingress_bytes_per_s = links::ingress_bytes_per_s(topology, placement[static_cast<size_t>(rank)]);
    times.receive_bound_s = ingress_bytes_per_s > 0 ? times.received_bytes / ingress_bytes_per_s : 0;
    result.lower_bound_s = std::max({result.lower_bound_s, times.compute_s, times.receive_bound_s});
  }
}

// Held by rotation, every resource of a class carries what its representative carried.
void summarize_links(const topo::Topology& topology, const Engine& engine, const std::vector<int32_t>& representative,
                     SimResult& result) {
  const std::vector<double>& capacity = topology.resource_bytes_per_s;
  result.resources.assign(capacity.size(), LinkStats{});
  for (size_t r = 0; r < capacity.size(); ++r) {
    LinkStats& stats = result.resources[r];
    const size_t carried_by = representative.empty() ? r : static_cast<size_t>(representative[r]);
    stats.bytes = engine.carried_bytes()[carried_by];
    stats.busy_s = engine.busy_s()[carried_by];
    stats.utilization = result.makespan_s > 0 ? stats.bytes / (capacity[r] * result.makespan_s) : 0;
  }
}
}  // namespace

SimResult simulate(const schedules::CheckedSchedule& checked, const topo::Topology& topology,
                   const std::vector<int32_t>& placement, const GpuProfile& gpu, const SimOptions& options) {
  const Schedule& schedule = checked.schedule();
  if (placement.size() < static_cast<size_t>(schedule.gpus))
    throw UserError("the placement covers " + std::to_string(placement.size()) + " ranks but the schedule has " +
                    std::to_string(schedule.gpus));
  // Held by rotation, the held programs run alone, their transfers crossing classes of links
  // (rotation_resources.hpp); ranks sharing devices or limited channels are per GPU, which the
  // held GPUs alone cannot stand for.
  std::vector<int32_t> representative;
  if (schedule.form == ProgramForm::rotation) {
    if (options.device_sharing || options.channels > 0) require_full_program(schedule, "simulate with ranks sharing devices or --channels");
    RotationResources classes = rotation_resources(schedule, topology, placement);
    if (!classes.why_not.empty())
      throw UserError("simulate: " + schedule.name() + " is held by rotation, but on this network " + classes.why_not +
                      "; generate it in full");
    representative = std::move(classes.representative);
  }
  const double tasks = simulation_tasks(checked, options);
  char messages[64];
  std::snprintf(messages, sizeof messages, "%.3g messages%s", tasks, options.chunk_bytes > 0 ? " with --chunk" : "");
  require_memory(kBytesPerTask * tasks + kBytesPerOp * static_cast<double>(schedule.ops.size()),
                 "simulating " + schedule.name() + " on " + std::to_string(schedule.gpus) + " GPUs (" + messages + ")");
  SimResult result;
  result.op_start_s.assign(schedule.ops.size(), kInfinity);
  result.op_finish_s.assign(schedule.ops.size(), kInfinity);
  result.gpus.assign(static_cast<size_t>(schedule.gpus), GpuTimes{});

  ScheduleRun run(checked, topology, placement, gpu, options, result, representative);
  run.run();
  require_all_finished(schedule, result);
  // Held by rotation, each task the engine ran stands for one on each shifted copy.
  const size_t copies = schedule.form == ProgramForm::rotation ? static_cast<size_t>(schedule.gpus / schedule.period) : 1;
  result.transfers = run.engine().task_count() * copies;
  result.events = run.engine().event_count();
  summarize_gpus(schedule, topology, placement, received_per_gpu(schedule, run.engine().received_bytes()), result);
  summarize_links(topology, run.engine(), representative, result);
  result.critical_path = critical_path(schedule, checked.analysis(), result.op_finish_s);
  return result;
}

}  // namespace tessera::sim
