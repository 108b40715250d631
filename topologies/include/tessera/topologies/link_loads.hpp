#pragma once
// Bytes each directed link carries for a schedule placed on a topology: every send/recv pair
// and every collective transfer is routed as a point-to-point transfer.
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::topo {

struct LinkLoads {
  std::vector<int64_t> edge_bytes;                        // per link index (Topology::link)
  int32_t busiest_edge = -1;
  int64_t busiest_edge_bytes = 0;
  std::array<int64_t, kDataKindCount> inter_node_bytes{};  // bytes by data kind crossing server boundaries
  int64_t inter_node_total() const;
};

// A schedule held by rotation (core/schedule.hpp) counts each held transfer for every shifted
// copy, routed between the copy's own GPUs: the same loads as the full program's.
LinkLoads compute_link_loads(Router& router, const std::vector<int32_t>& placement,
                             const schedules::CheckedSchedule& checked);

// The same transfers summed per ordered rank pair, whatever the placement: one entry per pair
// that exchanges data, ordered by (source, destination). Placing it is routing each pair once.
// Needs the full program.
struct RankTraffic {
  int32_t src_rank = 0;
  int32_t dst_rank = 0;
  int64_t bytes = 0;
};
std::vector<RankTraffic> rank_traffic(const Schedule& schedule, const BlockGrid& grid);

}  // namespace tessera::topo
