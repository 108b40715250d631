#include "tessera/sim/simulator.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/sim/flow_network.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::sim {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Event {
  double time_s;
  uint64_t sequence;
  int32_t transfer;  // the transfer whose data arrives now
  bool operator>(const Event& other) const {
    return time_s != other.time_s ? time_s > other.time_s : sequence > other.sequence;
  }
};

// One transfer in flight: a send/recv pair, or all the flows of a collective.
struct Transfer {
  std::vector<uint32_t> ops;  // ops that complete when it arrives
  int32_t flows_left = 0;
  double latency_s = 0;       // longest route latency among its flows
  double started_s = 0;
  std::vector<int32_t> gpus;  // endpoints, for communication time
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
    seconds += flops / (peak * efficiency) + gpu.launch_overhead_s;
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

  // Successors and pending counts from the dependencies.
  std::vector<uint32_t> pending(op_count), successor_offsets(op_count + 1, 0);
  for (size_t index = 0; index < op_count; ++index) {
    pending[index] = static_cast<uint32_t>(analysis.deps_of(index).size());
    for (uint32_t dep : analysis.deps_of(index)) ++successor_offsets[dep + 1];
  }
  for (size_t index = 0; index < op_count; ++index) successor_offsets[index + 1] += successor_offsets[index];
  std::vector<uint32_t> successors(successor_offsets.back());
  {
    std::vector<uint32_t> fill(successor_offsets.begin(), successor_offsets.end() - 1);
    for (uint32_t index = 0; index < op_count; ++index)
      for (uint32_t dep : analysis.deps_of(index)) successors[fill[dep]++] = index;
  }

  topo::Router router(topology);
  std::vector<double> capacity = topology.resource_bytes_per_s;
  FlowNetwork network(capacity);
  std::vector<double> alpha_beta_bytes(capacity.size(), 0), alpha_beta_busy(capacity.size(), 0);
  std::vector<Transfer> transfers;
  std::vector<int32_t> flow_transfer;  // flow id -> transfer
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
  auto add_flow = [&](int32_t transfer_id, int32_t src_rank, int32_t dst_rank, double bytes) {
    Transfer& transfer = transfers[static_cast<size_t>(transfer_id)];
    const int32_t src = placement[static_cast<size_t>(src_rank)], dst = placement[static_cast<size_t>(dst_rank)];
    resources.clear();
    double latency_s = options.message_overhead_s, narrowest = kInfinity;
    for (int32_t edge : router.route(src, dst)) {
      const topo::LinkInfo& link = topology.graph[topology.edges[static_cast<size_t>(edge)]];
      resources.push_back(link.resource);
      latency_s += link.latency_s;
      narrowest = std::min(narrowest, topology.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
    }
    transfer.latency_s = std::max(transfer.latency_s, latency_s);
    ++transfer.flows_left;
    if (options.fidelity == Fidelity::flow) {
      int32_t flow = network.start(resources, bytes, now_s);
      if (static_cast<size_t>(flow) >= flow_transfer.size()) flow_transfer.resize(static_cast<size_t>(flow) + 1);
      flow_transfer[static_cast<size_t>(flow)] = transfer_id;
    } else {
      double seconds = resources.empty() ? 0 : bytes / narrowest;
      for (int32_t resource : resources) {
        alpha_beta_bytes[static_cast<size_t>(resource)] += bytes;
        alpha_beta_busy[static_cast<size_t>(resource)] += seconds;
      }
      // The flow's data phase ends at now + seconds; the transfer arrives after its latency.
      arrivals.push({now_s + seconds, sequence++, -1 - transfer_id});
    }
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
    for (uint32_t next = successor_offsets[index]; next < successor_offsets[index + 1]; ++next)
      if (--pending[successors[next]] == 0) ready.push_back(successors[next]);
  };
  auto arrive = [&](int32_t transfer_id) {
    Transfer& transfer = transfers[static_cast<size_t>(transfer_id)];
    for (uint32_t op : transfer.ops) {
      auto g = static_cast<size_t>(schedule.ops[op].gpu);
      if (--in_flight[g] == 0) result.gpus[g].communication_s += now_s - busy_since[g];
      complete_op(op);
    }
  };
  auto flow_data_done = [&](int32_t transfer_id) {
    Transfer& transfer = transfers[static_cast<size_t>(transfer_id)];
    if (--transfer.flows_left == 0) arrivals.push({now_s + transfer.latency_s, sequence++, transfer_id});
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
        add_flow(id, schedule.ops[send].gpu, schedule.ops[recv].gpu, bytes_of(schedule.items_of(schedule.ops[send])));
        break;
      }
      case OpKind::collective: {
        auto c = static_cast<size_t>(op.peer);
        if (++arrived[c] < analysis.collective_ops[c].size()) break;
        // Direct algorithm: every transfer of the collective is its own concurrent flow.
        int32_t id = start_transfer(analysis.collective_ops[c]);
        for (const auto& piece : schedule.collectives[c].transfers)
          add_flow(id, piece.src, piece.dst, bytes_of(schedule.items_of(piece)));
        if (transfers[static_cast<size_t>(id)].flows_left == 0) arrivals.push({now_s, sequence++, id});
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
    if (compute_time == next_s) {
      uint32_t index = std::get<2>(finishing.top());
      finishing.pop();
      complete_op(index);
      ++completed;
    } else if (arrival_time == next_s) {
      Event event = arrivals.top();
      arrivals.pop();
      if (event.transfer < 0) {
        flow_data_done(-1 - event.transfer);  // alpha-beta: the data phase ended
      } else {
        arrive(event.transfer);
      }
    } else {
      network.finish(flow, now_s);
      flow_data_done(flow_transfer[static_cast<size_t>(flow)]);
    }
  }
  (void)completed;
  for (size_t index = 0; index < op_count; ++index)
    if (result.op_finish_s[index] == kInfinity)
      throw std::runtime_error("simulation stalled at " + schedule.describe(schedule.ops[index]) +
                               " (the schedule should have been checked first)");

  result.transfers = transfers.size();
  for (size_t index = 0; index < op_count; ++index) {
    GpuTimes& times = result.gpus[static_cast<size_t>(schedule.ops[index].gpu)];
    times.finish_s = std::max(times.finish_s, result.op_finish_s[index]);
    result.makespan_s = std::max(result.makespan_s, result.op_finish_s[index]);
  }
  for (auto& times : result.gpus) times.exposed_wait_s = std::max(0.0, times.finish_s - times.compute_s);
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
