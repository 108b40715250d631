#include "tessera/costmodel/cost.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "tessera/core/data_size.hpp"

namespace tessera {

namespace {

int64_t sum(const BytesByKind& bytes) {
  int64_t total = 0;
  for (int64_t value : bytes) total += value;
  return total;
}

double op_flops(const Schedule& schedule, const BlockGrid& grid, const Op& op) {
  const double heads = static_cast<double>(query_heads_per_group(schedule.problem, schedule.head_groups) *
                                           schedule.problem.batch);
  double pairs = 0;
  for (const auto& block : schedule.blocks_of(op)) pairs += static_cast<double>(grid.pairs(block.q_chunk, block.kv_chunk));
  return heads * (op.pass == Pass::forward ? forward_flops_per_head(schedule.problem, pairs)
                                           : backward_flops_per_head(schedule.problem, pairs));
}

// Peak bytes held per GPU, walking each GPU's ops in execution order: a GPU holds its own
// chunks from the start; a received input until its last use; a partial from its first write
// until it is sent away; an arriving partial until it is merged. GPUs are independent here, so
// one dense table per GPU (reset between GPUs) replaces any hashing.
std::vector<int64_t> peak_memory(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis) {
  const size_t gpus = static_cast<size_t>(schedule.gpus);
  std::vector<int64_t> peak(gpus, 0);
  const bool backward = schedule.problem.has_backward();
  // Execution-order positions grouped by GPU (a stable counting sort).
  std::vector<uint32_t> offsets(gpus + 1, 0);
  for (uint32_t index : analysis.order) ++offsets[static_cast<size_t>(schedule.ops[index].gpu) + 1];
  for (size_t g = 0; g < gpus; ++g) offsets[g + 1] += offsets[g];
  std::vector<uint32_t> positions(analysis.order.size());
  {
    std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
    for (uint32_t position = 0; position < analysis.order.size(); ++position)
      positions[fill[static_cast<size_t>(schedule.ops[analysis.order[position]].gpu)]++] = position;
  }
  const size_t items_per_gpu = static_cast<size_t>(kDataKindCount) * schedule.head_groups * schedule.chunks();
  auto slot = [&](const DataItem& item, bool inbox) {
    size_t index = (static_cast<size_t>(item.kind) * schedule.head_groups + item.head_group) * schedule.chunks() + item.chunk;
    return inbox ? index + items_per_gpu : index;
  };
  std::vector<int64_t> held(2 * items_per_gpu, 0);       // bytes held per slot, beyond own chunks
  std::vector<uint32_t> last_read(2 * items_per_gpu, 0);  // last position reading a received input
  std::vector<size_t> touched;

  for (size_t g = 0; g < gpus; ++g) {
    const auto gpu = static_cast<int32_t>(g);
    int64_t live = 0;
    for (int32_t hg = 0; hg < schedule.head_groups; ++hg)
      for (DataKind kind : {DataKind::Q, DataKind::KV, DataKind::dO, DataKind::Stats})
        if (backward || (kind != DataKind::dO && kind != DataKind::Stats))
          live += item_bytes(schedule, grid, DataItem{kind, hg, gpu});
    int64_t highest = live;
    for (uint32_t k = offsets[g]; k < offsets[g + 1]; ++k)
      for (const auto& access : analysis.accesses_of(analysis.order[positions[k]]))
        if (access.access == Access::read && !is_accumulator(access.item.kind) && access.item.chunk != gpu)
          last_read[slot(access.item, false)] = positions[k];
    auto hold = [&](const DataItem& item, bool inbox) {
      int64_t& bytes = held[slot(item, inbox)];
      if (bytes != 0) return;
      bytes = item_bytes(schedule, grid, item);
      live += bytes;
      touched.push_back(slot(item, inbox));
    };
    auto release = [&](const DataItem& item, bool inbox) {
      int64_t& bytes = held[slot(item, inbox)];
      live -= bytes;
      bytes = 0;
    };
    for (uint32_t k = offsets[g]; k < offsets[g + 1]; ++k) {
      const uint32_t position = positions[k];
      const Op& op = schedule.ops[analysis.order[position]];
      const bool moves_out = op.kind == OpKind::send || op.kind == OpKind::collective;
      const auto accesses = analysis.accesses_of(analysis.order[position]);
      for (const auto& access : accesses) {
        if (access.access == Access::inbox_write) hold(access.item, true);
        if (access.access != Access::write) continue;
        if (moves_out && is_accumulator(access.item.kind)) continue;  // it leaves, below
        if (!is_accumulator(access.item.kind) && access.item.chunk == gpu) continue;
        hold(access.item, false);
      }
      highest = std::max(highest, live);
      for (const auto& access : accesses) {
        if (access.access == Access::inbox_read) release(access.item, true);
        if (access.access == Access::write && moves_out && is_accumulator(access.item.kind)) release(access.item, false);
        if (access.access == Access::read && !is_accumulator(access.item.kind) && access.item.chunk != gpu &&
            last_read[slot(access.item, false)] == position)
          release(access.item, false);
      }
    }
    peak[g] = highest;
    for (size_t index : touched) held[index] = 0;
    touched.clear();
  }
  return peak;
}

}  // namespace

int64_t GpuCost::received_total() const { return sum(received_bytes); }
int64_t GpuCost::sent_total() const { return sum(sent_bytes); }

LowerBound communication_lower_bound(const Problem& problem, int32_t gpus, const BlockGrid& grid) {
  // A GPU evaluating a set S of (query, key) pairs must see the Q side of |I| queries and the
  // KV side of |J| keys with |I| * |J| >= |S| (Loomis-Whitney); it owns N/P of each already.
  // Minimise (a - N/P) * query_side + (b - N/P) * key_side over a * b = |S|, both sides within
  // [N/P, N]: the objective is convex in a, so clamp the stationary point.
  const double n = static_cast<double>(problem.seq_len);
  const double own = n / gpus;
  const double pairs = static_cast<double>(grid.total_pairs()) / gpus;  // |S| per GPU (one head)
  const double element = bytes_per_element(problem.dtype);
  const double h = static_cast<double>(problem.heads), g = static_cast<double>(problem.kv_heads);
  const double d = static_cast<double>(problem.head_dim), dv = static_cast<double>(problem.head_dim_v);
  const double batch = static_cast<double>(problem.batch);
  auto minimum = [&](double query_side, double key_side) {
    double low = std::max(own, pairs / n), high = std::min(n, pairs / own);
    if (low > high) return 0.0;
    double a = std::clamp(std::sqrt(key_side * pairs / query_side), low, high);
    return batch * ((a - own) * query_side + (pairs / a - own) * key_side);
  };
  LowerBound bound;
  // Forward: Q in and the partial O + LSE out on the query side; K and V in on the key side.
  if (problem.has_forward()) bound.forward_bytes = minimum(h * ((d + dv) * element + 4), g * (d + dv) * element);
  // Backward: Q, dO, LSE and delta in, dQ out; K, V in and dK, dV out.
  if (problem.has_backward())
    bound.backward_bytes = minimum(h * ((2 * d + dv) * element + 8), 2 * g * (d + dv) * element);
  return bound;
}

CostReport cost_schedule(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
                         const Hardware& hardware, const NetworkModel* network) {
  const UniformNetwork uniform(hardware.link_latency_s, hardware.link_bytes_per_s);
  if (network == nullptr) network = &uniform;
  CostReport report;
  report.gpus.assign(static_cast<size_t>(schedule.gpus), GpuCost{});
  std::vector<double> finish(schedule.ops.size(), 0);
  std::vector<double> ready(schedule.ops.size(), 0);
  std::vector<uint8_t> collective_timed(schedule.collectives.size(), 0);
  auto bytes_of = [&](std::span<const DataItem> items) {
    int64_t total = 0;
    for (const auto& item : items) total += item_bytes(schedule, grid, item);
    return total;
  };
  auto ready_time = [&](uint32_t index) {
    double time = 0;
    for (uint32_t dep : analysis.deps_of(index)) time = std::max(time, finish[dep]);
    return time;
  };

  for (size_t position = 0; position < analysis.order.size(); ++position) {
    const uint32_t index = analysis.order[position];
    const Op& op = schedule.ops[index];
    GpuCost& gpu = report.gpus[static_cast<size_t>(op.gpu)];
    switch (op.kind) {
      case OpKind::compute: {
        double flops = op_flops(schedule, grid, op);
        double duration = flops / hardware.effective_flops_per_s();
        gpu.flops += flops;
        gpu.compute_s += duration;
        finish[index] = ready_time(index) + duration;
        break;
      }
      case OpKind::merge: {
        // Read the arriving partial and the local one, write the sum: three passes over memory.
        double duration = 3.0 * static_cast<double>(bytes_of(schedule.items_of(op))) / hardware.hbm_bytes_per_s;
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
        double start = std::max(ready_time(index), ready_time(partner));
        int64_t total = 0;
        for (const auto& item : schedule.items_of(op)) {
          int64_t bytes = item_bytes(schedule, grid, item);
          total += bytes;
          gpu.sent_bytes[static_cast<int>(item.kind)] += bytes;
          report.gpus[static_cast<size_t>(recv.gpu)].received_bytes[static_cast<int>(item.kind)] += bytes;
        }
        double duration = network->transfer_s(op.gpu, recv.gpu, total);
        report.gpus[static_cast<size_t>(recv.gpu)].comm_s += duration;
        finish[index] = finish[partner] = start + duration;
        break;
      }
      case OpKind::collective: {
        const auto c = static_cast<size_t>(op.peer);
        if (collective_timed[c]) break;
        collective_timed[c] = 1;
        const Collective& collective = schedule.collectives[c];
        // Ideal algorithm: each member receives (and sends) its pieces one after another,
        // so the collective lasts as long as the busiest member's incoming or outgoing
        // transfers; a permutation is one concurrent step. On the uniform network an
        // all-gather of pieces of size s over m members takes (m - 1)(alpha + s / beta).
        std::unordered_map<int32_t, std::pair<double, double>> member_s;  // sending, receiving
        double longest_s = 0;
        for (const auto& transfer : collective.transfers) {
          int64_t transfer_bytes = 0;
          for (const auto& item : schedule.items_of(transfer)) {
            int64_t bytes = item_bytes(schedule, grid, item);
            transfer_bytes += bytes;
            report.gpus[static_cast<size_t>(transfer.src)].sent_bytes[static_cast<int>(item.kind)] += bytes;
            report.gpus[static_cast<size_t>(transfer.dst)].received_bytes[static_cast<int>(item.kind)] += bytes;
          }
          double seconds = network->transfer_s(transfer.src, transfer.dst, transfer_bytes);
          member_s[transfer.src].first += seconds;
          member_s[transfer.dst].second += seconds;
          longest_s = std::max(longest_s, seconds);
        }
        double duration = longest_s;
        if (collective.kind != CollectiveKind::permute)
          for (const auto& [member, seconds] : member_s) duration = std::max({duration, seconds.first, seconds.second});
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

  std::vector<int64_t> peaks = peak_memory(schedule, grid, analysis);
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    GpuCost& gpu = report.gpus[static_cast<size_t>(schedule.ops[index].gpu)];
    gpu.finish_s = std::max(gpu.finish_s, finish[index]);
  }
  for (size_t g = 0; g < report.gpus.size(); ++g) {
    GpuCost& gpu = report.gpus[g];
    gpu.peak_memory_bytes = peaks[g];
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
  return report;
}

}  // namespace tessera
