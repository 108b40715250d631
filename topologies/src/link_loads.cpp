// Per-link bytes of a placed schedule. Every transfer is counted once: a send op and its
// matching recv describe the same transfer, so only sends are routed (the schedule is assumed
// checked, so every send has its recv); a collective's transfers are counted from the
// collective itself, not from each member's op.
#include "tessera/topologies/link_loads.hpp"

#include <map>

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"

namespace tessera::topo {

namespace {

class Accumulator {
 public:
  Accumulator(Router& router, const std::vector<int32_t>& placement, const Schedule& schedule, const BlockGrid& grid)
      : router_(router), placement_(placement), schedule_(schedule), grid_(grid) {
    const Topology& topology = router.topology();
    loads_.edge_bytes.assign(static_cast<size_t>(topology.link_count()), 0);
    // A GPU outside any server (node -1) counts as a server of its own.
    server_.resize(static_cast<size_t>(topology.gpu_count()));
    for (int32_t gpu = 0; gpu < topology.gpu_count(); ++gpu) {
      const int32_t node = topology.node_of(gpu);
      server_[static_cast<size_t>(gpu)] = node >= 0 ? node : -1 - gpu;
    }
  }

  void add(int32_t src_rank, int32_t dst_rank, std::span<const DataItem> items) {
    const int32_t src = placement_[static_cast<size_t>(src_rank)], dst = placement_[static_cast<size_t>(dst_rank)];
    if (src == dst) return;
    const bool crosses_servers = server_[static_cast<size_t>(src)] != server_[static_cast<size_t>(dst)];
    int64_t bytes = 0;
    for (const DataItem& item : items) {
      const int64_t item_size = item_bytes(schedule_, grid_, item);
      bytes += item_size;
      if (crosses_servers) loads_.inter_node_bytes[static_cast<size_t>(item.kind)] += item_size;
    }
    for (int32_t edge : router_.route(src, dst)) loads_.edge_bytes[static_cast<size_t>(edge)] += bytes;
  }

  LinkLoads finish() {
    for (size_t edge = 0; edge < loads_.edge_bytes.size(); ++edge) {
      if (loads_.edge_bytes[edge] > loads_.busiest_edge_bytes) {  // ties: the lowest index
        loads_.busiest_edge_bytes = loads_.edge_bytes[edge];
        loads_.busiest_edge = static_cast<int32_t>(edge);
      }
    }
    return std::move(loads_);
  }

 private:
  Router& router_;
  const std::vector<int32_t>& placement_;
  const Schedule& schedule_;
  const BlockGrid& grid_;
  std::vector<int32_t> server_;
  LinkLoads loads_;
};

}  // namespace

int64_t LinkLoads::inter_node_total() const {
  int64_t total = 0;
  for (int64_t bytes : inter_node_bytes) total += bytes;
  return total;
}

LinkLoads compute_link_loads(Router& router, const std::vector<int32_t>& placement,
                             const schedules::CheckedSchedule& checked) {
  const Schedule& schedule = checked.schedule();
  require_full_program(schedule, "compute_link_loads");
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
  Accumulator accumulator(router, placement, schedule, grid);
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::send) accumulator.add(op.gpu, op.peer, schedule.items_of(op));
  for (const Collective& collective : schedule.collectives)
    for (const Transfer& transfer : collective.transfers)
      accumulator.add(transfer.src, transfer.dst, schedule.items_of(transfer));
  return accumulator.finish();
}

std::vector<RankTraffic> rank_traffic(const Schedule& schedule, const BlockGrid& grid) {
  std::map<std::pair<int32_t, int32_t>, int64_t> bytes_by_pair;
  auto add = [&](int32_t src_rank, int32_t dst_rank, std::span<const DataItem> items) {
    if (src_rank == dst_rank) return;
    int64_t& bytes = bytes_by_pair[{src_rank, dst_rank}];
    for (const DataItem& item : items) bytes += item_bytes(schedule, grid, item);
  };
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::send) add(op.gpu, op.peer, schedule.items_of(op));
  for (const Collective& collective : schedule.collectives)
    for (const Transfer& transfer : collective.transfers) add(transfer.src, transfer.dst, schedule.items_of(transfer));
  std::vector<RankTraffic> traffic;
  traffic.reserve(bytes_by_pair.size());
  for (const auto& [pair, bytes] : bytes_by_pair) traffic.push_back({pair.first, pair.second, bytes});
  return traffic;
}

}  // namespace tessera::topo
