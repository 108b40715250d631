// Per-link bytes of a placed schedule. Every transfer is counted once: a send op and its
// matching recv describe the same transfer, so only sends are counted (the schedule is assumed
// checked, so every send has its recv); a collective's transfers are counted from the
// collective itself, not from each member's op.
#include "tessera/topologies/link_loads.hpp"

#include <map>

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"

namespace tessera::topo {

namespace {

// Bytes by data kind one rank pair exchanges.
using PairBytes = std::array<int64_t, kDataKindCount>;

// The schedule's transfers summed per ordered rank pair, so that each pair is routed once
// (a ring at 1,024 GPUs has 3 M sends between 2 K pairs). Sums of integers: the loads are the
// same as routing transfer by transfer.
std::map<std::pair<int32_t, int32_t>, PairBytes> bytes_by_pair(const Schedule& schedule, const BlockGrid& grid) {
  std::map<std::pair<int32_t, int32_t>, PairBytes> pairs;
  PairBytes* last = nullptr;
  std::pair<int32_t, int32_t> last_pair{-1, -1};
  auto add = [&](int32_t src_rank, int32_t dst_rank, std::span<const DataItem> items) {
    if (src_rank == dst_rank) return;
    // Consecutive sends of a program mostly go to one peer: skip the lookup for those.
    if (last == nullptr || last_pair != std::pair{src_rank, dst_rank}) {
      last_pair = {src_rank, dst_rank};
      last = &pairs[last_pair];
    }
    for (const DataItem& item : items) (*last)[static_cast<size_t>(item.kind)] += item_bytes(schedule, grid, item);
  };
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::send) add(op.gpu, op.peer, schedule.items_of(op));
  for (const Collective& collective : schedule.collectives)
    for (const Transfer& transfer : collective.transfers) add(transfer.src, transfer.dst, schedule.items_of(transfer));
  return pairs;
}

}  // namespace

int64_t LinkLoads::inter_node_total() const {
  int64_t total = 0;
  for (int64_t bytes : inter_node_bytes) total += bytes;
  return total;
}

LinkLoads compute_link_loads(Router& router, const std::vector<int32_t>& placement,
                             const schedules::CheckedSchedule& checked) {
  const Schedule& schedule = checked.schedule();
  const BlockGrid& grid = checked.grid();
  const int32_t gpus = router.topology().gpu_count();
  if (static_cast<int32_t>(placement.size()) < schedule.gpus)
    throw UserError("the placement covers " + std::to_string(placement.size()) + " ranks but the schedule has " +
                    std::to_string(schedule.gpus));
  for (int32_t rank = 0; rank < schedule.gpus; ++rank) {
    const int32_t gpu = placement[static_cast<size_t>(rank)];
    if (gpu < 0 || gpu >= gpus)
      throw UserError("the placement puts rank " + std::to_string(rank) + " on GPU " + std::to_string(gpu) +
                      ", outside the topology's " + std::to_string(gpus) + " GPUs");
  }
  const Topology& topology = router.topology();
  LinkLoads loads;
  loads.edge_bytes.assign(static_cast<size_t>(topology.link_count()), 0);
  // Held by rotation, a held pair stands for its copies shifted by every multiple of the period,
  // each routed between its own GPUs (the network need not look the same from them).
  const int32_t period = schedule.form == ProgramForm::rotation ? schedule.period : schedule.gpus;
  for (const auto& [pair, bytes] : bytes_by_pair(schedule, grid)) {
    int64_t total = 0;
    for (int64_t kind_bytes : bytes) total += kind_bytes;
    for (int32_t shift = 0; shift < schedule.gpus; shift += period) {
      const int32_t src = placement[static_cast<size_t>((pair.first + shift) % schedule.gpus)];
      const int32_t dst = placement[static_cast<size_t>((pair.second + shift) % schedule.gpus)];
      if (src == dst) continue;
      // A GPU outside any server (node -1) counts as a server of its own.
      const int32_t src_node = topology.node_of(src), dst_node = topology.node_of(dst);
      if (src_node < 0 || dst_node < 0 || src_node != dst_node)
        for (size_t kind = 0; kind < bytes.size(); ++kind) loads.inter_node_bytes[kind] += bytes[kind];
      for (int32_t edge : router.route(src, dst)) loads.edge_bytes[static_cast<size_t>(edge)] += total;
    }
  }
  for (size_t edge = 0; edge < loads.edge_bytes.size(); ++edge) {
    if (loads.edge_bytes[edge] > loads.busiest_edge_bytes) {  // ties: the lowest index
      loads.busiest_edge_bytes = loads.edge_bytes[edge];
      loads.busiest_edge = static_cast<int32_t>(edge);
    }
  }
  return loads;
}

std::vector<RankTraffic> rank_traffic(const Schedule& schedule, const BlockGrid& grid) {
  require_full_program(schedule, "rank_traffic");
  std::vector<RankTraffic> traffic;
  for (const auto& [pair, bytes] : bytes_by_pair(schedule, grid)) {
    int64_t total = 0;
    for (int64_t kind_bytes : bytes) total += kind_bytes;
    traffic.push_back({pair.first, pair.second, total});
  }
  return traffic;
}

}  // namespace tessera::topo
