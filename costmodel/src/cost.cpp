#include "tessera/costmodel/cost.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "tessera/core/data_size.hpp"
#include "tessera/schedules/op_data.hpp"

#include "collective_length.hpp"

namespace tessera::costmodel {

using schedules::ScheduleAnalysis;

namespace {

int64_t sum(const BytesByKind& bytes) {
  int64_t total = 0;
  for (int64_t value : bytes) total += value;
  return total;
}


// Query heads of one head group times the batch: the factor op_flops scales a head's FLOPs by.
double flop_heads(const Schedule& schedule) {
  return static_cast<double>(query_heads_per_group(schedule.problem, schedule.head_groups) * schedule.problem.batch);
}

double flops_of_pairs(const Schedule& schedule, const Op& op, double pairs, double heads) {
  return heads * (op.pass == Pass::forward ? forward_flops_per_head(schedule.problem, pairs)
                                           : backward_flops_per_head(schedule.problem, pairs));
}

double op_flops(const Schedule& schedule, const BlockGrid& grid, const Op& op, double heads) {
  return flops_of_pairs(schedule, op, schedules::op_pairs(schedule, grid, op), heads);
}

// Held by rotation on a network other than the uniform one, a held transfer is priced for each
// of its shifted copies: exact only where every copy is as fast and of the same path class. The
// caller holds the schedule at a period the network is symmetric under (sim/symmetric_period.hpp
// finds one); checked here over the distinct pairs (a ring's 2 x period), not per transfer.
void require_symmetric_network(const Schedule& schedule, const NetworkModel& network) {
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::send) pairs.emplace(op.gpu, op.peer);
  for (const Collective& collective : schedule.collectives)
    for (const Transfer& transfer : collective.transfers) pairs.emplace(transfer.src, transfer.dst);
  constexpr int64_t kGiB = int64_t{1} << 30;
  for (const auto& [src, dst] : pairs)
    for (int32_t shift = schedule.period; shift < schedule.gpus; shift += schedule.period) {
      const int32_t shifted_src = (src + shift) % schedule.gpus, shifted_dst = (dst + shift) % schedule.gpus;
      for (int64_t bytes : {int64_t{0}, kGiB})
        if (network.transfer_s(shifted_src, shifted_dst, bytes) != network.transfer_s(src, dst, bytes))
          throw std::logic_error("cost_schedule: held by rotation, but GPU " + std::to_string(src) + " -> " +
                                 std::to_string(dst) + " and its copy shifted by " + std::to_string(shift) +
                                 " take different times on this network");
      if (network.path_class(shifted_src, shifted_dst) != network.path_class(src, dst))
        throw std::logic_error("cost_schedule: held by rotation, but GPU " + std::to_string(src) + " -> " +
                               std::to_string(dst) + " and its copy shifted by " + std::to_string(shift) +
                               " cross different kinds of path");
    }
}

// Read the arriving partial and the local one, write the sum: three passes over memory.
double merge_s(int64_t bytes, const Hardware& hardware) {
  return 3.0 * static_cast<double>(bytes) / hardware.hbm_bytes_per_s;
}

// Each block is its own attention kernel, and each kernel pays a launch.
double compute_op_s(const Schedule& schedule, const Op& op, double flops, const Hardware& hardware) {
  return flops / hardware.effective_flops_per_s() +
         static_cast<double>(schedule.blocks_of(op).size()) * hardware.kernel_launch_s;
}

}  // namespace

double compute_op_seconds(const Schedule& schedule, const BlockGrid& grid, const Op& op, const Hardware& hardware) {
  if (op.kind == OpKind::merge) {
    int64_t bytes = 0;
    for (const auto& item : schedule.items_of(op)) bytes += item_bytes(schedule, grid, item);
    return merge_s(bytes, hardware);
  }
  return compute_op_s(schedule, op, op_flops(schedule, grid, op, flop_heads(schedule)), hardware);
}

int64_t GpuCost::received_total() const { return sum(received_bytes); }
int64_t GpuCost::sent_total() const { return sum(sent_bytes); }

CostReport cost_schedule(const schedules::CheckedSchedule& checked, const Hardware& hardware, const NetworkModel* network) {
  const Schedule& schedule = checked.schedule();
  const BlockGrid& grid = checked.grid();
  const ScheduleAnalysis& analysis = checked.analysis();
  const UniformNetwork uniform(hardware.link_latency_s, hardware.link_bytes_per_s);
  // Held by rotation (the programs of a few GPUs), every GPU's figures are its held GPU's only
  // where the network treats every shifted GPU alike.
  const bool rotation = schedule.form == ProgramForm::rotation;
  if (rotation && network != nullptr) require_symmetric_network(schedule, *network);
  if (network == nullptr) network = &uniform;
  if (analysis.step_order.size() != schedule.ops.size())
    throw std::logic_error("cost_schedule: the analysis has no step order (check_schedule makes it)");
  CostReport report;
  report.gpus.assign(static_cast<size_t>(schedule.gpus), GpuCost{});
  std::vector<double> finish(schedule.ops.size(), 0);
  // Item sizes at one sequence were made with the check (item_sizes.hpp); the batch scales them.
  const schedules::ItemSizes& sizes = analysis.item_sizes;
  const int64_t batch = schedule.problem.batch;
  auto item_bytes = [&sizes, batch](const DataItem& item) { return batch * sizes.one_sequence_bytes(item); };
  const double heads = flop_heads(schedule);
  std::vector<uint8_t> collective_timed(schedule.collectives.size(), 0);
  CollectiveClock collective_clock(schedule.gpus);
  std::vector<double> send_port_free(static_cast<size_t>(schedule.gpus), 0), receive_port_free(static_cast<size_t>(schedule.gpus), 0);
  auto bytes_of = [&](std::span<const DataItem> items) {
    int64_t total = 0;
    for (const auto& item : items) total += item_bytes(item);
    return total;
  };
  auto ready_time = [&](uint32_t index) {
    double time = 0;
    for (uint32_t dep : analysis.deps_of(index)) time = std::max(time, finish[dep]);
    return time;
  };

  // In step order (analysis.hpp): transfers queue for a GPU's links, and a GPU's communication
  // seconds are summed, in the same order on every GPU of a schedule run alike up to rotation.
  for (const uint32_t index : analysis.step_order) {
    const Op& op = schedule.ops[index];
    GpuCost& gpu = report.gpus[static_cast<size_t>(op.gpu)];
    switch (op.kind) {
      case OpKind::compute: {
        // The check summed each op's blocks once where the schedule is small enough to keep it.
        const double flops = analysis.op_pairs.empty() ? op_flops(schedule, grid, op, heads)
                                                       : flops_of_pairs(schedule, op, analysis.op_pairs[index], heads);
        const double duration = compute_op_s(schedule, op, flops, hardware);
        gpu.flops += flops;
        gpu.compute_s += duration;
        finish[index] = ready_time(index) + duration;
        break;
      }
      case OpKind::merge: {
        double duration = merge_s(bytes_of(schedule.items_of(op)), hardware);
        gpu.compute_s += duration;
        finish[index] = ready_time(index) + duration;
        break;
      }
      case OpKind::send:
      case OpKind::recv: {
        // The send completes first in the order, with its recv right after (rendezvous).
        if (op.kind == OpKind::recv) break;
        const auto partner = static_cast<uint32_t>(analysis.partner[index]);
        const Op& recv = schedule.ops[partner];
        // A GPU's link out and link in carry one message's bytes at a time: transfers that
        // share a sender or a receiver queue for it (their latencies still overlap). Without
        // this, two transfers between the same pair (a ring's KV and its dK/dV partial) would
        // each get the whole link.
        double start = std::max({ready_time(index), ready_time(partner), send_port_free[static_cast<size_t>(op.gpu)],
                                 receive_port_free[static_cast<size_t>(recv.gpu)]});
        int64_t total = 0;
        for (const auto& item : schedule.items_of(op)) {
          int64_t bytes = item_bytes(item);
          total += bytes;
          gpu.sent_bytes[static_cast<int>(item.kind)] += bytes;
          report.gpus[static_cast<size_t>(recv.gpu)].received_bytes[static_cast<int>(item.kind)] += bytes;
        }
        // The wire, then what the library costs per message on this path. (The send names the
        // receiver: held by rotation, the recv is a held GPU's, standing for the receiver's.)
        const double transfer_s = network->transfer_s(op.gpu, op.peer, total);
        const double duration = transfer_s + hardware.message.message_s(network->path_class(op.gpu, op.peer));
        report.gpus[static_cast<size_t>(recv.gpu)].comm_s += duration;
        finish[index] = finish[partner] = start + duration;
        // The links are free again once the bytes have left; the latency is not theirs.
        const double wire_s = transfer_s - network->transfer_s(op.gpu, op.peer, 0);
        send_port_free[static_cast<size_t>(op.gpu)] = receive_port_free[static_cast<size_t>(recv.gpu)] = start + wire_s;
        break;
      }
      case OpKind::collective: {
        const auto c = static_cast<size_t>(op.peer);
        if (collective_timed[c]) break;
        collective_timed[c] = 1;
        const double duration = collective_clock.length_s(
            schedule, schedule.collectives[c], *network, hardware, item_bytes,
            [&report](const Transfer& transfer, const DataItem& item, int64_t bytes) {
              report.gpus[static_cast<size_t>(transfer.src)].sent_bytes[static_cast<int>(item.kind)] += bytes;
              report.gpus[static_cast<size_t>(transfer.dst)].received_bytes[static_cast<int>(item.kind)] += bytes;
            });
        double start = 0;
        for (uint32_t member : analysis.collective_ops[c]) start = std::max(start, ready_time(member));
        for (uint32_t member : analysis.collective_ops[c]) {
          finish[member] = start + duration;
          report.gpus[static_cast<size_t>(schedule.ops[member].gpu)].comm_s += duration;
        }
        break;
      }
    }
  }

  // Each GPU's last finish, in a dense array: a max into the 184-byte GpuCost of a random GPU
  // per op was a tenth of this function's time.
  std::vector<double> finish_s(report.gpus.size(), 0);
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    double& last = finish_s[static_cast<size_t>(schedule.ops[index].gpu)];
    last = std::max(last, finish[index]);
  }
  for (size_t g = 0; g < report.gpus.size(); ++g) report.gpus[g].finish_s = finish_s[g];
  // Held by rotation, GPU g ran GPU (g mod period)'s program shifted: the recvs of the GPUs
  // held stand for what their peers received, so each GPU sent and received what its held GPU did.
  if (rotation)
    for (size_t g = static_cast<size_t>(schedule.period); g < report.gpus.size(); ++g)
      report.gpus[g] = report.gpus[g % static_cast<size_t>(schedule.period)];
  // Memory was walked once, at one sequence, when the schedule was checked (memory_peak.hpp):
  // every item's bytes are the batch times one sequence's, so every figure scales exactly.
  const std::vector<schedules::GpuMemory>& memory = analysis.memory_one_sequence;
  if (memory.size() != report.gpus.size()) throw std::logic_error("cost_schedule: the analysis has no memory per GPU");
  for (size_t g = 0; g < report.gpus.size(); ++g) {
    GpuCost& gpu = report.gpus[g];
    gpu.resident_bytes = batch * memory[g].resident_bytes;
    gpu.peak_transfer_bytes = batch * memory[g].transfer_bytes;
    gpu.peak_memory_bytes = gpu.resident_bytes + gpu.peak_transfer_bytes;
    report.peak_transfer_bytes_max = std::max(report.peak_transfer_bytes_max, gpu.peak_transfer_bytes);
    report.recv_bytes_max = std::max(report.recv_bytes_max, gpu.received_total());
    report.flops_max = std::max(report.flops_max, gpu.flops);
    report.flops_total += gpu.flops;
    report.peak_memory_bytes_max = std::max(report.peak_memory_bytes_max, gpu.peak_memory_bytes);
    report.time_s = std::max(report.time_s, gpu.finish_s);
    report.compute_s_max = std::max(report.compute_s_max, gpu.compute_s);
    report.comm_s_max = std::max(report.comm_s_max, gpu.comm_s);
    for (int kind = 0; kind < kDataKindCount; ++kind)
      report.recv_bytes_mean_by_kind[static_cast<size_t>(kind)] +=
          static_cast<double>(gpu.received_bytes[static_cast<size_t>(kind)]) / static_cast<double>(schedule.gpus);
  }
  // CommCom ratio over the whole schedule (bytes moved per FLOP done), and in time: the
  // busiest GPU's communication against the busiest GPU's compute.
  double received_total = 0;
  for (const auto& gpu : report.gpus) received_total += static_cast<double>(gpu.received_total());
  report.bytes_per_flop = report.flops_total > 0 ? received_total / report.flops_total : 0;
  report.comm_over_compute = report.compute_s_max > 0 ? report.comm_s_max / report.compute_s_max : 0;
  report.lower_bound = communication_lower_bound(schedule.problem, schedule.gpus, grid);
  report.lower_bound_ratio = report.lower_bound.total_bytes() > 0
                                 ? static_cast<double>(report.recv_bytes_max) / report.lower_bound.total_bytes()
                                 : 0;
  // The time bound in this model's terms (lower_bound.hpp): blocks priced as the compute case
  // above prices them, and the busiest receiver's bytes over its transfers' rate times its
  // receiving streams: more than its link in can carry (transfers queue for it, collectives
  // overlap), so the bound stays below anything this model prints.
  const double least_compute_s =
      least_busiest_compute_s(schedule.problem, grid, schedule.gpus,
                              [&](const Schedule& ideal, const Op& op) {
                                return compute_op_s(ideal, op, op_flops(ideal, grid, op, flop_heads(ideal)), hardware);
                              });
  size_t receiver = 0;
  for (size_t g = 0; g < report.gpus.size(); ++g)
    if (report.gpus[g].received_total() > report.gpus[receiver].received_total()) receiver = g;
  const GpuCost& busiest = report.gpus[receiver];
  const int32_t receiving_streams =
      streams_used(schedule, static_cast<int32_t>(receiver), {OpKind::recv, OpKind::collective});
  const double receive_bytes_per_s =
      busiest.comm_s > 0 ? static_cast<double>(busiest.received_total()) * receiving_streams / busiest.comm_s : 0;
  report.lower_bound_time =
      time_lower_bound(schedule, least_compute_s, report.lower_bound.total_bytes(), receive_bytes_per_s);
  report.time_over_lower_bound =
      report.lower_bound_time.total_s() > 0 ? report.time_s / report.lower_bound_time.total_s() : 0;
  return report;
}

double time_on_shared_devices_s(const CostReport& report, const std::vector<int32_t>& device_of_rank,
                                const std::vector<double>& concurrency_speedup) {
  if (device_of_rank.size() != report.gpus.size())
    throw std::invalid_argument("time_on_shared_devices_s: one device per rank expected");
  std::vector<double> compute_s;
  std::vector<int64_t> ranks;
  for (size_t rank = 0; rank < device_of_rank.size(); ++rank) {
    const auto device = static_cast<size_t>(device_of_rank[rank]);
    if (device >= compute_s.size()) {
      compute_s.resize(device + 1, 0);
      ranks.resize(device + 1, 0);
    }
    compute_s[device] += report.gpus[rank].compute_s;
    ++ranks[device];
  }
  double time_s = report.time_s;
  for (size_t device = 0; device < compute_s.size(); ++device) {
    if (ranks[device] == 0) continue;
    const auto k = static_cast<size_t>(std::min<int64_t>(ranks[device], static_cast<int64_t>(concurrency_speedup.size())));
    const double speedup = concurrency_speedup.empty() ? 1 : concurrency_speedup[k - 1];
    time_s = std::max(time_s, compute_s[device] / speedup);
  }
  return time_s;
}

}  // namespace tessera::costmodel
