#include "tessera/sim/simulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/sim/flow_network.hpp"
#include "tessera/topologies/path_class.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::sim {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Event {
  double time_s;
  uint64_t sequence;
  int32_t task;
  bool data_done;  // alpha-beta: the data phase ended, the latency follows
  bool operator>(const Event& other) const {
    return time_s != other.time_s ? time_s > other.time_s : sequence > other.sequence;
  }
};

// One transfer in flight: a send/recv pair, or a whole collective.
struct Transfer {
  std::vector<uint32_t> ops;  // ops that complete when its last task arrives
  int32_t tasks_left = 0;
  double started_s = 0;
};

// One point-to-point piece of a transfer: a message, or one step of a collective algorithm.
struct Task {
  int32_t transfer = 0;
  int32_t src = 0;  // ranks
  int32_t dst = 0;
  double bytes = 0;
  int32_t waiting = 0;             // tasks it waits for
  std::array<int32_t, 2> then{-1, -1};  // tasks waiting for it
  double latency_s = 0;
  bool pays_overhead = true;       // false for the later steps of a collective (one NCCL operation)
};

}  // namespace

Fidelity parse_fidelity(const std::string& text) {
  if (text == "flow") return Fidelity::flow;
  if (text == "alpha-beta" || text == "alpha_beta") return Fidelity::alpha_beta;
  throw UserError("fidelity '" + text + "' is not one of flow, alpha-beta");
}

std::string to_string(Fidelity fidelity) { return fidelity == Fidelity::flow ? "flow" : "alpha-beta"; }

double op_compute_s(const Schedule& schedule, const BlockGrid& grid, const Op& op, const GpuProfile& gpu) {
  const Problem& problem = schedule.problem;
  if (op.kind == OpKind::merge) {
    int64_t bytes = 0;
    for (const auto& item : schedule.items_of(op)) bytes += item_bytes(schedule, grid, item);
    return 3.0 * static_cast<double>(bytes) / gpu.hbm_bytes_per_s;  // read both partials, write the sum
  }
  const double heads = static_cast<double>(query_heads_per_group(problem, schedule.head_groups) * problem.batch);
  const double peak = gpu.peak_flops_per_s(problem.dtype);
  double seconds = 0;
  for (const auto& block : schedule.blocks_of(op)) {
    double pairs = static_cast<double>(grid.pairs(block.q_chunk, block.kv_chunk));
    double flops = heads * (op.pass == Pass::forward ? forward_flops_per_head(problem, pairs)
                                                     : backward_flops_per_head(problem, pairs));
    double efficiency = gpu.efficiency(static_cast<double>(grid.chunk_tokens(block.q_chunk)),
                                       static_cast<double>(grid.chunk_tokens(block.kv_chunk)));
    const double rate = op.pass == Pass::forward ? 1.0 : gpu.backward_rate_ratio;
    seconds += flops / (peak * efficiency * rate) + gpu.launch_overhead_s;
  }
  return seconds;
}

SimResult simulate(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
                   const topo::Topology& topology, const std::vector<int32_t>& placement, const GpuProfile& gpu,
                   const SimOptions& options) {
  const size_t op_count = schedule.ops.size();
  if (placement.size() < static_cast<size_t>(schedule.gpus))
    throw UserError("the placement covers " + std::to_string(placement.size()) + " ranks but the schedule has " +
                    std::to_string(schedule.gpus));
  SimResult result;
  result.op_start_s.assign(op_count, kInfinity);
  result.op_finish_s.assign(op_count, kInfinity);
  result.gpus.assign(static_cast<size_t>(schedule.gpus), GpuTimes{});

  // Pending dependency counts; successors come with the analysis.
  if (analysis.successor_offsets.size() != op_count + 1)
    throw std::runtime_error("simulate needs the analysis of a checked schedule");
  std::vector<uint32_t> pending(op_count);
  for (size_t index = 0; index < op_count; ++index) pending[index] = static_cast<uint32_t>(analysis.deps_of(index).size());

  topo::Router router(topology);
  std::vector<double> capacity = topology.resource_bytes_per_s;
  FlowNetwork network(capacity);
  std::vector<double> alpha_beta_bytes(capacity.size(), 0), alpha_beta_busy(capacity.size(), 0);
  std::vector<Transfer> transfers;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> arrivals;
  uint64_t sequence = 0;
  std::vector<uint8_t> posted(op_count, 0);
  std::vector<uint32_t> arrived(schedule.collectives.size(), 0);
  std::vector<int32_t> resources;

  // Compute ops finish at a known future time; ties in time go by launch order.
  std::priority_queue<std::tuple<double, uint64_t, uint32_t>, std::vector<std::tuple<double, uint64_t, uint32_t>>,
                      std::greater<>>
      finishing;
  std::vector<uint32_t> ready;
  double now_s = 0;
  // Communication time per GPU is the union of its transfers' lifetimes: count transfers in
  // flight and add the span while the count is above zero.
  std::vector<int32_t> in_flight(static_cast<size_t>(schedule.gpus), 0);
  std::vector<double> busy_since(static_cast<size_t>(schedule.gpus), 0);

  auto bytes_of = [&](std::span<const DataItem> items) {
    int64_t total = 0;
    for (const auto& item : items) total += item_bytes(schedule, grid, item);
    return static_cast<double>(total);
  };
  std::vector<Task> tasks;
  std::vector<int32_t> flow_task;  // flow id -> task
  // Starts a task's data movement now: a flow (flow fidelity) or a timed data phase.
  // Communication channels per GPU: a task needs a free sending channel at its source and a
  // free receiving one at its destination while its data moves (never while it waits, so
  // the limit cannot deadlock); otherwise it queues at its source.
  std::vector<int32_t> sending(static_cast<size_t>(schedule.gpus), 0), receiving(sending);
  std::vector<std::deque<int32_t>> queued(static_cast<size_t>(schedule.gpus));
  auto has_channel = [&](const Task& task) {
    return options.channels <= 0 || (sending[static_cast<size_t>(task.src)] < options.channels &&
                                     receiving[static_cast<size_t>(task.dst)] < options.channels);
  };
  std::function<void(int32_t)> launch_task;
  auto request_task = [&](int32_t task_id) {
    const Task& task = tasks[static_cast<size_t>(task_id)];
    if (!has_channel(task)) {
      queued[static_cast<size_t>(task.src)].push_back(task_id);
      return;
    }
    launch_task(task_id);
  };
  auto release_channels = [&](int32_t task_id) {
    if (options.channels <= 0) return;
    const Task& task = tasks[static_cast<size_t>(task_id)];
    --sending[static_cast<size_t>(task.src)];
    --receiving[static_cast<size_t>(task.dst)];
    // A queued task may wait on either end, so every queue's head is looked at (in GPU
    // order, for determinism); the limit is opt-in and meant for moderate GPU counts.
    for (auto& queue : queued) {
      while (!queue.empty() && has_channel(tasks[static_cast<size_t>(queue.front())])) {
        int32_t next = queue.front();
        queue.pop_front();
        launch_task(next);
      }
    }
  };
  launch_task = [&](int32_t task_id) {
    Task& task = tasks[static_cast<size_t>(task_id)];
    if (options.channels > 0) {
      ++sending[static_cast<size_t>(task.src)];
      ++receiving[static_cast<size_t>(task.dst)];
    }
    const int32_t src = placement[static_cast<size_t>(task.src)], dst = placement[static_cast<size_t>(task.dst)];
    resources.clear();
    double latency_s = 0, narrowest = kInfinity;
    const auto route = router.route(src, dst);
    for (int32_t edge : route) {
      const topo::LinkInfo& link = topology.graph[topology.edges[static_cast<size_t>(edge)]];
      resources.push_back(link.resource);
      latency_s += link.latency_s;
      narrowest = std::min(narrowest, topology.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
    }
    // Per-message costs: the path's protocol latency (NVLink or network), and the library's
    // overhead once per operation; a device copy (no hops) pays neither.
    const MessageCosts message = options.message_costs();
    const PathClass path = topo::path_class(topology, route);
    latency_s += message.latency_s(path);
    if (task.pays_overhead && path != PathClass::local) latency_s += message.overhead_s;
    task.latency_s = latency_s;
    if (options.fidelity == Fidelity::flow) {
      int32_t flow = network.start(resources, task.bytes, now_s);
      if (static_cast<size_t>(flow) >= flow_task.size()) flow_task.resize(static_cast<size_t>(flow) + 1);
      flow_task[static_cast<size_t>(flow)] = task_id;
    } else {
      double seconds = resources.empty() ? 0 : task.bytes / narrowest;
      for (int32_t resource : resources) {
        alpha_beta_bytes[static_cast<size_t>(resource)] += task.bytes;
        alpha_beta_busy[static_cast<size_t>(resource)] += seconds;
      }
      arrivals.push({now_s + seconds, sequence++, task_id, true});
    }
  };
  auto add_task = [&](int32_t transfer_id, int32_t src_rank, int32_t dst_rank, double bytes) {
    tasks.push_back(Task{transfer_id, src_rank, dst_rank, bytes, 0, {-1, -1}, 0, true});
    ++transfers[static_cast<size_t>(transfer_id)].tasks_left;
    return static_cast<int32_t>(tasks.size() - 1);
  };
  auto start_transfer = [&](std::vector<uint32_t> ops) {
    auto id = static_cast<int32_t>(transfers.size());
    transfers.push_back(Transfer{});
    transfers.back().ops = std::move(ops);
    transfers.back().started_s = now_s;
    for (uint32_t op : transfers.back().ops) {
      auto g = static_cast<size_t>(schedule.ops[op].gpu);
      if (in_flight[g]++ == 0) busy_since[g] = now_s;
    }
    return id;
  };
  auto complete_op = [&](uint32_t index) {
    result.op_finish_s[index] = now_s;
    for (uint32_t next : analysis.successors_of(index))
      if (--pending[next] == 0) ready.push_back(next);
  };
  auto arrive = [&](int32_t transfer_id) {
    Transfer& transfer = transfers[static_cast<size_t>(transfer_id)];
    for (uint32_t op : transfer.ops) {
      auto g = static_cast<size_t>(schedule.ops[op].gpu);
      if (--in_flight[g] == 0) result.gpus[g].communication_s += now_s - busy_since[g];
      complete_op(op);
    }
  };
  // A task's data has arrived (after its latency): release the tasks waiting for it.
  auto task_arrived = [&](int32_t task_id) {
    const Task task = tasks[static_cast<size_t>(task_id)];
    result.gpus[static_cast<size_t>(task.dst)].received_bytes += task.bytes;
    for (int32_t next : task.then)
      if (next >= 0 && --tasks[static_cast<size_t>(next)].waiting == 0) request_task(next);
    if (--transfers[static_cast<size_t>(task.transfer)].tasks_left == 0) arrive(task.transfer);
  };
  // Ring algorithm of an all-gather or reduce-scatter over the members in order: k - 1 steps;
  // at each step every member passes one piece to the next, once it has its own previous
  // step done and the piece from its predecessor. Piece sizes come from the transfers.
  auto ring_collective = [&](int32_t transfer_id, const Collective& collective) {
    const auto k = static_cast<int32_t>(collective.members.size());
    std::vector<double> piece(static_cast<size_t>(k), 0);  // all-gather: by source; reduce-scatter: by destination
    for (const auto& transfer : collective.transfers) {
      auto it = std::find(collective.members.begin(), collective.members.end(),
                          collective.kind == CollectiveKind::all_gather ? transfer.src : transfer.dst);
      auto& size = piece[static_cast<size_t>(it - collective.members.begin())];
      size = std::max(size, bytes_of(schedule.items_of(transfer)));
    }
    const auto first = static_cast<int32_t>(tasks.size());
    auto task_at = [&](int32_t step, int32_t member) { return first + step * k + member; };
    for (int32_t step = 0; step + 1 < k; ++step)
      for (int32_t member = 0; member < k; ++member) {
        // All-gather: forward the piece that started at member - step. Reduce-scatter: pass on
        // the running sum destined for member - step - 1, which arrives there at the last step.
        int32_t owner = collective.kind == CollectiveKind::all_gather ? (member - step + k) % k
                                                                      : (member - step - 1 + 2 * k) % k;
        add_task(transfer_id, collective.members[static_cast<size_t>(member)],
                 collective.members[static_cast<size_t>((member + 1) % k)], piece[static_cast<size_t>(owner)]);
      }
    for (int32_t step = 1; step + 1 < k; ++step)
      for (int32_t member = 0; member < k; ++member) {
        Task& task = tasks[static_cast<size_t>(task_at(step, member))];
        task.waiting = 2;
        task.pays_overhead = false;  // the collective's overhead came with its first step
        tasks[static_cast<size_t>(task_at(step - 1, member))].then[0] = task_at(step, member);
        tasks[static_cast<size_t>(task_at(step - 1, (member - 1 + k) % k))].then[1] = task_at(step, member);
      }
    for (int32_t member = 0; member < k && k > 1; ++member) request_task(task_at(0, member));
  };
  auto launch = [&](uint32_t index) {
    const Op& op = schedule.ops[index];
    result.op_start_s[index] = now_s;
    posted[index] = 1;
    switch (op.kind) {
      case OpKind::compute:
      case OpKind::merge: {
        double seconds = op_compute_s(schedule, grid, op, gpu);
        result.gpus[static_cast<size_t>(op.gpu)].compute_s += seconds;
        finishing.push({now_s + seconds, sequence++, index});
        break;
      }
      case OpKind::send:
      case OpKind::recv: {
        auto partner = static_cast<uint32_t>(analysis.partner[index]);
        if (!posted[partner]) break;
        uint32_t send = op.kind == OpKind::send ? index : partner;
        uint32_t recv = op.kind == OpKind::send ? partner : index;
        int32_t id = start_transfer({send, recv});
        const double bytes = bytes_of(schedule.items_of(schedule.ops[send]));
        const int32_t src = schedule.ops[send].gpu, dst = schedule.ops[recv].gpu;
        if (options.chunk_bytes <= 0 || bytes <= options.chunk_bytes) {
          request_task(add_task(id, src, dst, bytes));
          break;
        }
        // Chunks in sequence: each waits for the one before it.
        const auto chunks = static_cast<int64_t>(std::ceil(bytes / options.chunk_bytes));
        int32_t previous = -1, first = -1;
        for (int64_t chunk = 0; chunk < chunks; ++chunk) {
          double size = std::min(options.chunk_bytes, bytes - static_cast<double>(chunk) * options.chunk_bytes);
          int32_t task = add_task(id, src, dst, size);
          if (previous >= 0) {
            tasks[static_cast<size_t>(previous)].then[0] = task;
            tasks[static_cast<size_t>(task)].waiting = 1;
          } else {
            first = task;
          }
          previous = task;
        }
        request_task(first);
        break;
      }
      case OpKind::collective: {
        auto c = static_cast<size_t>(op.peer);
        if (++arrived[c] < analysis.collective_ops[c].size()) break;
        const Collective& collective = schedule.collectives[c];
        int32_t id = start_transfer(analysis.collective_ops[c]);
        if (collective.kind == CollectiveKind::all_gather || collective.kind == CollectiveKind::reduce_scatter) {
          ring_collective(id, collective);
        } else {
          // All-to-all and permutations: direct, every transfer its own concurrent flow.
          const auto first = tasks.size();
          for (const auto& piece : collective.transfers)
            add_task(id, piece.src, piece.dst, bytes_of(schedule.items_of(piece)));
          for (size_t task = first; task < tasks.size(); ++task) request_task(static_cast<int32_t>(task));
        }
        if (transfers[static_cast<size_t>(id)].tasks_left == 0) arrive(id);
        break;
      }
    }
  };

  for (uint32_t index = 0; index < op_count; ++index)
    if (pending[index] == 0) ready.push_back(index);
  size_t completed = 0;
  while (true) {
    // Launch everything ready at this instant (in FIFO order, for determinism).
    for (size_t next = 0; next < ready.size(); ++next) launch(ready[next]);
    ready.clear();
    // The earliest of: a compute op finishing, a flow running dry, a transfer arriving.
    double compute_time = finishing.empty() ? kInfinity : std::get<0>(finishing.top());
    auto [flow_time, flow] = network.next_completion();
    double arrival_time = arrivals.empty() ? kInfinity : arrivals.top().time_s;
    double next_s = std::min({compute_time, flow_time, arrival_time});
    if (next_s == kInfinity) break;
    now_s = next_s;
    ++result.events;
    if (options.cancel && (result.events & 4095) == 0 && options.cancel->load(std::memory_order_relaxed))
      throw SimulationCancelled();
    if (compute_time == next_s) {
      uint32_t index = std::get<2>(finishing.top());
      finishing.pop();
      complete_op(index);
      ++completed;
    } else if (arrival_time == next_s) {
      Event event = arrivals.top();
      arrivals.pop();
      if (event.data_done) {
        release_channels(event.task);
        arrivals.push({now_s + tasks[static_cast<size_t>(event.task)].latency_s, sequence++, event.task, false});
      } else {
        task_arrived(event.task);
      }
    } else {
      network.finish(flow, now_s);
      int32_t task = flow_task[static_cast<size_t>(flow)];
      release_channels(task);
      arrivals.push({now_s + tasks[static_cast<size_t>(task)].latency_s, sequence++, task, false});
    }
  }
  (void)completed;
  for (size_t index = 0; index < op_count; ++index)
    if (result.op_finish_s[index] == kInfinity)
      throw std::runtime_error("simulation stalled at " + schedule.describe(schedule.ops[index]) +
                               " (the schedule should have been checked first)");

  result.transfers = tasks.size();
  for (size_t index = 0; index < op_count; ++index) {
    GpuTimes& times = result.gpus[static_cast<size_t>(schedule.ops[index].gpu)];
    times.finish_s = std::max(times.finish_s, result.op_finish_s[index]);
    result.makespan_s = std::max(result.makespan_s, result.op_finish_s[index]);
  }
  for (auto& times : result.gpus) times.exposed_wait_s = std::max(0.0, times.finish_s - times.compute_s);
  for (int32_t rank = 0; rank < schedule.gpus; ++rank) {
    GpuTimes& times = result.gpus[static_cast<size_t>(rank)];
    double ingress_bytes_per_s = 0;
    const auto vertex = topology.gpu_vertices[static_cast<size_t>(placement[static_cast<size_t>(rank)])];
    for (auto [edge, end] = boost::in_edges(vertex, topology.graph); edge != end; ++edge)
      ingress_bytes_per_s += topology.graph[*edge].bytes_per_s;
    times.receive_bound_s = ingress_bytes_per_s > 0 ? times.received_bytes / ingress_bytes_per_s : 0;
    result.lower_bound_s = std::max({result.lower_bound_s, times.compute_s, times.receive_bound_s});
  }
  result.resources.assign(capacity.size(), LinkStats{});
  for (size_t r = 0; r < capacity.size(); ++r) {
    LinkStats& stats = result.resources[r];
    stats.bytes = options.fidelity == Fidelity::flow ? network.carried_bytes()[r] : alpha_beta_bytes[r];
    stats.busy_s = options.fidelity == Fidelity::flow ? network.busy_s()[r] : alpha_beta_busy[r];
    stats.utilization = result.makespan_s > 0 ? stats.bytes / (capacity[r] * result.makespan_s) : 0;
  }

  // Critical path: from the last op back through whichever predecessor ended when it started.
  if (op_count > 0) {
    uint32_t at = 0;
    for (uint32_t index = 0; index < op_count; ++index)
      if (result.op_finish_s[index] > result.op_finish_s[at]) at = index;
    std::vector<uint8_t> seen(op_count, 0);
    while (true) {
      result.critical_path.push_back(at);
      seen[at] = 1;
      // Candidates: its own dependencies, and for a transfer those of the other side.
      uint32_t best = UINT32_MAX;
      double latest = -1;
      auto consider = [&](uint32_t candidate) {
        for (uint32_t dep : analysis.deps_of(candidate))
          if (!seen[dep] && result.op_finish_s[dep] > latest) {
            latest = result.op_finish_s[dep];
            best = dep;
          }
      };
      consider(at);
      const Op& op = schedule.ops[at];
      if (analysis.partner[at] >= 0) consider(static_cast<uint32_t>(analysis.partner[at]));
      if (op.kind == OpKind::collective)
        for (uint32_t member : analysis.collective_ops[static_cast<size_t>(op.peer)]) consider(member);
      if (best == UINT32_MAX) break;
      at = best;
    }
    std::reverse(result.critical_path.begin(), result.critical_path.end());
  }
  return result;
}

}  // namespace tessera::sim
