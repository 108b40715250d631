#include "tessera/sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "tessera/core/error.hpp"

namespace tessera::sim {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A duration or size the run would never get past: NaN, infinite or negative. The engine is
// the last place every input meets, so it refuses them here, naming where they came from,
// rather than stalling with events at an infinite (or NaN) time.
// `what` is a C string, not a std::string: this runs for every task and compute, and building
// a string there (or formatting a number, below) cost more than the simulation itself.
void require_usable(double value, const char* what) {
  if (!std::isfinite(value) || value < 0)
    throw UserError(std::string(what) + " is " + number_text(value) + "; expected a finite number >= 0");
}

void require_message_costs(const MessageCosts& costs) {
  require_usable(costs.overhead_s, "the per-message overhead (--overhead-us, in seconds)");
  require_usable(costs.nvlink_latency_s, "the per-message NVLink latency (--nvlink-message-us, in seconds)");
  require_usable(costs.network_latency_s, "the per-message network latency (--network-message-us, in seconds)");
}

// An event at a time past every double: its duration is finite but absurd (a peak of 1e-300
// FLOP/s, a bandwidth of 1e-300 B/s). `what` says which.
// `describe` builds the description only when the check fails (see require_usable).
template <typename Describe>
void require_reachable(double time_s, const Describe& describe) {
  if (!(time_s < kInfinity))
    throw UserError(describe() + " would end at " + number_text(time_s) + " s, past any time the simulation can hold");
}
}

// The topology's resources, and with sharing at a copy bandwidth, one copy resource per GPU
// after them (the flow network shares it between concurrent copies within that GPU).
std::vector<double> with_copy_resources(const topo::Topology& topology, const DeviceSharing* sharing) {
  std::vector<double> capacity = topology.resource_bytes_per_s;
  if (sharing && sharing->copy_bytes_per_s > 0) {
    require_usable(sharing->copy_bytes_per_s, "the copy bandwidth of a device (calibration copy_bytes_per_s)");
    capacity.insert(capacity.end(), static_cast<size_t>(topology.gpu_count()), sharing->copy_bytes_per_s);
  }
  return capacity;
}

Fidelity parse_fidelity(const std::string& text) {
  if (text == "flow") return Fidelity::flow;
  if (text == "alpha-beta" || text == "alpha_beta") return Fidelity::alpha_beta;
  throw UserError("fidelity '" + text + "' is not one of flow, alpha-beta");
}

std::string to_string(Fidelity fidelity) { return fidelity == Fidelity::flow ? "flow" : "alpha-beta"; }

Engine::Engine(const topo::Topology& topology, std::vector<int32_t> gpu_of_rank, const EngineOptions& options,
               EngineClient& client)
    : gpu_of_rank_(std::move(gpu_of_rank)),
      options_(options),
      client_(client),
      paths_(topology, options.resource_representative),
      network_(with_copy_resources(topology, options.sharing)),
      sending_(gpu_of_rank_.size(), 0),
      receiving_(gpu_of_rank_.size(), 0),
      queued_(gpu_of_rank_.size()),
      received_bytes_(gpu_of_rank_.size(), 0),
      alpha_beta_bytes_(topology.resource_bytes_per_s.size(), 0),
      alpha_beta_busy_s_(topology.resource_bytes_per_s.size(), 0) {
  require_message_costs(options_.message_costs);
  if (options_.sharing) {
    shared_ = std::make_unique<SharedDevices>(topology.gpu_count(), *options_.sharing);
    if (options_.sharing->copy_bytes_per_s > 0) copy_resource_base_ = static_cast<int32_t>(topology.resource_bytes_per_s.size());
  }
}

const std::vector<double>& Engine::carried_bytes() const {
  return options_.fidelity == Fidelity::flow ? network_.carried_bytes() : alpha_beta_bytes_;
}

const std::vector<double>& Engine::busy_s() const {
  return options_.fidelity == Fidelity::flow ? network_.busy_s() : alpha_beta_busy_s_;
}

// --- building the task DAG ---------------------------------------------------------------

int32_t Engine::store_task(const Task& task) {
  if (free_tasks_.empty()) {
    tasks_.push_back(task);
    return static_cast<int32_t>(tasks_.size() - 1);
  }
  const int32_t slot = free_tasks_.back();
  free_tasks_.pop_back();
  tasks_[static_cast<size_t>(slot)] = task;
  return slot;
}

int32_t Engine::store_transfer(Transfer transfer) {
  if (free_transfers_.empty()) {
    transfers_.push_back(std::move(transfer));
    last_begun_ = static_cast<int32_t>(transfers_.size() - 1);
  } else {
    last_begun_ = free_transfers_.back();
    free_transfers_.pop_back();
    transfers_[static_cast<size_t>(last_begun_)] = std::move(transfer);
  }
  return last_begun_;
}

int32_t Engine::begin_transfer() { return store_transfer(Transfer{}); }

int32_t Engine::begin_transfer(std::unique_ptr<TaskSource> source) {
  const int64_t tasks = source->task_count();
  if (tasks < 0 || tasks >= std::numeric_limits<int32_t>::max())
    throw UserError("a collective of " + std::to_string(tasks) + " messages: more than the simulator can count");
  return store_transfer(Transfer{-1, -1, static_cast<int32_t>(tasks), std::move(source)});
}

Engine::Task Engine::make_task(int32_t transfer, int32_t src_rank, int32_t dst_rank, double bytes,
                               bool pays_overhead) const {
  require_usable(bytes, "a message's size in bytes (from the schedule's sizes, or --size)");
  Task task;
  task.transfer = transfer;
  task.src_rank = src_rank;
  task.dst_rank = dst_rank;
  task.bytes = bytes;
  task.pays_overhead = pays_overhead;
  return task;
}

int32_t Engine::add_task(int32_t transfer, int32_t src_rank, int32_t dst_rank, double bytes, bool pays_overhead) {
  if (transfer != last_begun_) throw std::logic_error("engine tasks go to the transfer begun last");
  if (transfers_[static_cast<size_t>(transfer)].source)
    throw std::logic_error("engine tasks are added to a transfer without a task source");
  if (tasks_.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw UserError("the simulation needs more than " + std::to_string(std::numeric_limits<int32_t>::max()) +
                    " messages in flight at once (lower the GPU count, or raise --chunk)");
  const int32_t slot = store_task(make_task(transfer, src_rank, dst_rank, bytes, pays_overhead));
  Transfer& owner = transfers_[static_cast<size_t>(transfer)];
  if (owner.last_task >= 0)
    tasks_[static_cast<size_t>(owner.last_task)].next_in_transfer = slot;
  else
    owner.first_task = slot;
  owner.last_task = slot;
  ++owner.tasks_left;
  ++task_count_;
  return slot;
}

void Engine::start_task(int32_t transfer, int32_t src_rank, int32_t dst_rank, double bytes, bool pays_overhead,
                        uint32_t tag) {
  if (!transfers_[static_cast<size_t>(transfer)].source)
    throw std::logic_error("engine tasks are started by the task source of their transfer");
  Task task = make_task(transfer, src_rank, dst_rank, bytes, pays_overhead);
  task.tag = tag;
  const int32_t slot = store_task(task);
  ++task_count_;
  request(slot);
}

void Engine::add_dependency(int32_t before, int32_t after) {
  ++tasks_[static_cast<size_t>(after)].waiting;
  dependents_.push_back(Dependent{after, -1});
  const auto edge = static_cast<int32_t>(dependents_.size() - 1);
  Task& waited_for = tasks_[static_cast<size_t>(before)];
  if (waited_for.last_dependent >= 0)
    dependents_[static_cast<size_t>(waited_for.last_dependent)].next = edge;
  else
    waited_for.first_dependent = edge;
  waited_for.last_dependent = edge;
}

void Engine::start_transfer(int32_t transfer) {
  Transfer& started = transfers_[static_cast<size_t>(transfer)];
  if (started.tasks_left == 0) {
    started.source.reset();
    client_.transfer_arrived(transfer);
    free_transfers_.push_back(transfer);
    return;
  }
  if (started.source) {
    started.source->start(*this, transfer);
    return;
  }
  // (request() launches or queues; it adds no task, so the list stays as it is.)
  for (int32_t task = started.first_task; task >= 0; task = tasks_[static_cast<size_t>(task)].next_in_transfer)
    if (tasks_[static_cast<size_t>(task)].waiting == 0) request(task);
}

void Engine::start_compute(double seconds, uint32_t tag) {
  require_usable(seconds, "a compute time in seconds (from the GPU profile: its peak FLOP/s, efficiency, launch cost "
                          "and memory bandwidth, or --calibration)");
  require_reachable(now_s_ + seconds, [&] {
    return "a compute of " + number_text(seconds) + " s (from the GPU profile or --calibration)";
  });
  push_event(now_s_ + seconds, EventKind::compute_done, tag);
}

void Engine::start_compute_on(int32_t rank, double seconds, uint32_t tag) {
  if (!shared_) {
    start_compute(seconds, tag);
    return;
  }
  require_usable(seconds, "a compute time in seconds (from the GPU profile or --calibration)");
  shared_->start(gpu_of_rank_[static_cast<size_t>(rank)], seconds, tag, now_s_);
}

// --- moving data -------------------------------------------------------------------------

bool Engine::has_channel(const Task& task) const {
  return options_.channels <= 0 || (sending_[static_cast<size_t>(task.src_rank)] < options_.channels &&
                                    receiving_[static_cast<size_t>(task.dst_rank)] < options_.channels);
}

void Engine::request(int32_t task) {
  const Task& requested = tasks_[static_cast<size_t>(task)];
  if (!has_channel(requested)) {
    queued_[static_cast<size_t>(requested.src_rank)].push_back(task);
    return;
  }
  launch(task);
}

void Engine::launch(int32_t task_id) {
  Task& task = tasks_[static_cast<size_t>(task_id)];
  if (options_.channels > 0) {
    ++sending_[static_cast<size_t>(task.src_rank)];
    ++receiving_[static_cast<size_t>(task.dst_rank)];
  }
  const int32_t src_gpu = gpu_of_rank_[static_cast<size_t>(task.src_rank)];
  RoutedPath path = paths_.between(src_gpu, gpu_of_rank_[static_cast<size_t>(task.dst_rank)]);
  // Ranks sharing a GPU: their message is a copy over the GPU's copy resource.
  int32_t copy_resource = -1;
  if (copy_resource_base_ >= 0 && path.resources.empty() && task.src_rank != task.dst_rank) {
    copy_resource = copy_resource_base_ + src_gpu;
    path.resources = std::span<const int32_t>(&copy_resource, 1);
    path.narrowest_bytes_per_s = options_.sharing->copy_bytes_per_s;
  }
  // Per-message costs: the path's protocol latency (NVLink or network), and the library's
  // overhead once per operation; a device copy (no hops) pays neither.
  const MessageCosts& message = options_.message_costs;
  double latency_s = path.link_latency_s;
  latency_s += message.latency_s(path.path_class);
  if (task.pays_overhead && path.path_class != PathClass::local) latency_s += message.overhead_s;
  task.latency_s = latency_s;
  // A finite but absurd link (1e-300 B/s) would put the flow's end past every double.
  if (!path.resources.empty())
    require_reachable(now_s_ + latency_s + task.bytes / path.narrowest_bytes_per_s, [&] {
      return "a message of " + number_text(task.bytes) + " bytes over links of " +
             number_text(path.narrowest_bytes_per_s) + " B/s (the topology's or --bandwidth)";
    });
  if (options_.fidelity == Fidelity::flow) {
    const auto flow = static_cast<size_t>(network_.start(path.resources, task.bytes, now_s_));
    if (flow >= task_of_flow_.size()) task_of_flow_.resize(flow + 1);
    task_of_flow_[flow] = task_id;
    return;
  }
  const double seconds = path.resources.empty() ? 0 : task.bytes / path.narrowest_bytes_per_s;
  for (int32_t resource : path.resources) {
    if (resource >= static_cast<int32_t>(alpha_beta_bytes_.size())) continue;  // a copy resource
    alpha_beta_bytes_[static_cast<size_t>(resource)] += task.bytes;
    alpha_beta_busy_s_[static_cast<size_t>(resource)] += seconds;
  }
  push_event(now_s_ + seconds, EventKind::data_moved, static_cast<uint32_t>(task_id));
}

void Engine::release_channels(int32_t task_id) {
  if (options_.channels <= 0) return;
  const Task& task = tasks_[static_cast<size_t>(task_id)];
  --sending_[static_cast<size_t>(task.src_rank)];
  --receiving_[static_cast<size_t>(task.dst_rank)];
  // A queued task may wait on either end, so every queue's head is looked at (in rank order,
  // for determinism); the limit is opt-in and meant for moderate rank counts.
  for (auto& queue : queued_) {
    while (!queue.empty() && has_channel(tasks_[static_cast<size_t>(queue.front())])) {
      const int32_t next = queue.front();
      queue.pop_front();
      launch(next);
    }
  }
}

// Its data is through: the channels are free, the latency follows.
void Engine::data_moved(int32_t task) {
  release_channels(task);
  push_event(now_s_ + tasks_[static_cast<size_t>(task)].latency_s, EventKind::arrived, static_cast<uint32_t>(task));
}

// Its data has arrived: the tasks waiting for it may start, and its transfer may be complete.
// A made task's source makes and starts what it released; its slot is then free.
void Engine::arrived(int32_t task_id) {
  const Task& task = tasks_[static_cast<size_t>(task_id)];
  const int32_t transfer = task.transfer;
  received_bytes_[static_cast<size_t>(task.dst_rank)] += task.bytes;
  Transfer& owner = transfers_[static_cast<size_t>(transfer)];
  if (owner.source) {
    owner.source->arrived(*this, transfer, task.tag);  // may grow tasks_: `task` is not used after
  } else {
    for (int32_t edge = task.first_dependent; edge >= 0; edge = dependents_[static_cast<size_t>(edge)].next) {
      const int32_t next = dependents_[static_cast<size_t>(edge)].task;
      if (--tasks_[static_cast<size_t>(next)].waiting == 0) request(next);
    }
  }
  // Nothing refers to an arrived task again: its transfer's list was walked when it started.
  free_tasks_.push_back(task_id);
  Transfer& done = transfers_[static_cast<size_t>(transfer)];
  if (--done.tasks_left == 0) {
    done.source.reset();
    client_.transfer_arrived(transfer);
    free_transfers_.push_back(transfer);
  }
}

// --- the event loop ------------------------------------------------------------------------

void Engine::push_event(double time_s, EventKind kind, uint32_t subject) {
  events_.push(time_s, kind == EventKind::compute_done ? 0 : 1, Event{subject, kind});
}

void Engine::count_event() {
  ++event_count_;
  if (options_.cancel && (event_count_ & 4095) == 0 && options_.cancel->load(std::memory_order_relaxed))
    throw SimulationCancelled();
}

void Engine::run() {
  while (true) {
    client_.before_next_event();
    const double event_s = events_.empty() ? kInfinity : events_.top_time_s();
    const auto [flow_s, flow] = network_.next_completion();
    const auto [shared_s, shared_gpu] = shared_ ? shared_->next_completion() : std::pair<double, int32_t>{kInfinity, -1};
    const double next_s = std::min({event_s, flow_s, shared_s});
    if (next_s == kInfinity) return;
    now_s_ = next_s;
    count_event();
    // Compute ends first at an instant (as compute_done events do), shared compute among it.
    if (shared_s == next_s && !(event_s == next_s && events_.top_class() == 0)) {
      client_.compute_done(shared_->finish(shared_gpu, now_s_));
      continue;
    }
    if (event_s != next_s) {
      network_.finish(flow, now_s_);
      data_moved(task_of_flow_[static_cast<size_t>(flow)]);
      continue;
    }
    const Event event = events_.top();
    events_.pop();
    switch (event.kind) {
      case EventKind::compute_done: client_.compute_done(event.subject); break;
      case EventKind::data_moved: data_moved(static_cast<int32_t>(event.subject)); break;
      case EventKind::arrived: arrived(static_cast<int32_t>(event.subject)); break;
    }
  }
}

}  // namespace tessera::sim
