// The "auto" placement search. Scoring a placement routes each communicating rank pair once
// (rank_traffic) and sums bytes per link, so trying a few dozen orders costs about as much as
// one link-load count of the schedule; only the near-ties are simulated, and only when asked.
#include "tessera/topologies/placement_search.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "tessera/core/error.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::topo {

namespace {

constexpr size_t kStrides = 3;  // rank distances (besides 1) tried as stride permutations

// Rank distances (the shorter way round a ring of `ranks`) by the bytes sent over them, most
// first (ties: the shorter distance).
std::vector<int32_t> heaviest_distances(int32_t ranks, const std::vector<RankTraffic>& traffic) {
  std::map<int32_t, int64_t> bytes_by_distance;
  for (const RankTraffic& pair : traffic) {
    const int32_t forward = ((pair.dst_rank - pair.src_rank) % ranks + ranks) % ranks;
    bytes_by_distance[std::min(forward, ranks - forward)] += pair.bytes;
  }
  std::vector<std::pair<int64_t, int32_t>> by_bytes;
  for (const auto& [distance, bytes] : bytes_by_distance) by_bytes.emplace_back(-bytes, distance);
  std::sort(by_bytes.begin(), by_bytes.end());
  std::vector<int32_t> distances;
  for (const auto& [negative_bytes, distance] : by_bytes) distances.push_back(distance);
  return distances;
}

PlacementScore score(Router& router, const std::vector<RankTraffic>& traffic, RankPlacement placement) {
  const Topology& topology = router.topology();
  std::vector<int64_t> resource_bytes(topology.resource_bytes_per_s.size(), 0);
  for (const RankTraffic& pair : traffic) {
    const int32_t src = placement.gpu_of_rank[static_cast<size_t>(pair.src_rank)];
    const int32_t dst = placement.gpu_of_rank[static_cast<size_t>(pair.dst_rank)];
    for (int32_t edge : router.route(src, dst))
      resource_bytes[static_cast<size_t>(topology.link(edge).resource)] += pair.bytes;
  }
  PlacementScore result;
  result.placement = std::move(placement);
  // The sum goes by bandwidth class in whole bytes, so that two orders with the same loads on
  // differently numbered links (mirror images) get exactly the same sum.
  std::map<double, int64_t> bytes_by_bandwidth;
  for (size_t resource = 0; resource < resource_bytes.size(); ++resource) {
    const double bytes_per_s = topology.resource_bytes_per_s[resource];
    const double busy_s = static_cast<double>(resource_bytes[resource]) / bytes_per_s;
    bytes_by_bandwidth[bytes_per_s] += resource_bytes[resource];
    if (busy_s > result.busiest_link_s) {
      result.busiest_link_s = busy_s;
      result.busiest_link_bytes = resource_bytes[resource];
    }
  }
  for (const auto& [bytes_per_s, bytes] : bytes_by_bandwidth) result.link_s_sum += static_cast<double>(bytes) / bytes_per_s;
  return result;
}

}  // namespace

std::vector<std::string> candidate_orders(const Topology& topology, int32_t ranks,
                                          const std::vector<RankTraffic>& traffic) {
  // Stride permutations: identity, and each heavy distance T (a ring of stride T becomes
  // consecutive). Block sizes: the heavy distances and the lengths of those rings, for the
  // sequences that keep blocks whole (packed) or on one rail (rail-aligned:S).
  std::vector<int32_t> strides{1};
  std::set<int32_t> blocks;
  for (int32_t distance : heaviest_distances(ranks, traffic)) {
    if (distance > 1 && distance < ranks && strides.size() <= kStrides) {
      strides.push_back(distance);
      blocks.insert(distance);
      blocks.insert((ranks + distance - 1) / distance);
    }
  }
  const int32_t server = std::max(1, topology.gpus_per_node);
  std::vector<std::string> sequences{"linear", "rail-aligned", "round-robin"};
  for (int32_t block = 2; block < server; ++block)
    if (server % block == 0) sequences.push_back("rail-aligned:" + std::to_string(block));
  for (int32_t block : blocks)
    if (block > 1 && block < server && server % block != 0) sequences.push_back("packed:" + std::to_string(block));
  std::vector<std::string> orders;
  for (int32_t stride : strides)
    for (const std::string& sequence : sequences)
      orders.push_back(stride == 1 ? sequence : "stride:" + std::to_string(stride) + "+" + sequence);
  return orders;
}

std::vector<PlacementScore> rank_placements(const Topology& topology, const schedules::CheckedSchedule& checked,
                                            const PlacementSearch& search) {
  const Schedule& schedule = checked.schedule();
  const BlockGrid& grid = checked.grid();
  if (schedule.gpus > topology.gpu_count())
    throw UserError("the schedule has " + std::to_string(schedule.gpus) + " ranks but the topology has " +
                    std::to_string(topology.gpu_count()) + " GPUs");
  const std::vector<RankTraffic> traffic = rank_traffic(schedule, grid);
  Router router(topology);
  std::vector<PlacementScore> scores;
  std::set<std::vector<int32_t>> seen;
  for (const std::string& order : candidate_orders(topology, schedule.gpus, traffic)) {
    std::vector<int32_t> gpu_of_rank;
    try {
      gpu_of_rank = order_ranks(topology, schedule.gpus, order);
    } catch (const UserError&) {
      continue;  // the order does not fit this cluster (e.g. packed blocks with too few GPUs)
    }
    if (!seen.insert(gpu_of_rank).second) continue;  // the same map under another name: keep the first
    scores.push_back(score(router, traffic, RankPlacement{order, std::move(gpu_of_rank)}));
  }
  if (scores.empty()) throw std::logic_error("placement search: no candidate order fits '" + topology.name + "'");
  // Stable: among equal scores the earlier candidate (linear before the others) stays first.
  std::stable_sort(scores.begin(), scores.end(), [](const PlacementScore& x, const PlacementScore& y) {
    if (x.busiest_link_s != y.busiest_link_s) return x.busiest_link_s < y.busiest_link_s;
    return x.link_s_sum < y.link_s_sum;
  });
  if (!search.simulated_s) return scores;
  // Near-ties on the busiest link: the simulator decides among the first few. Orders whose
  // links carry the same loads (the same busiest and the same sum) are mirror images of each
  // other on a symmetric cluster: only the first of them is simulated.
  std::vector<size_t> finalists;
  for (size_t index = 0; index < scores.size(); ++index) {
    const PlacementScore& candidate = scores[index];
    if (candidate.busiest_link_s > scores.front().busiest_link_s * (1 + search.near_tie)) break;
    if (finalists.size() == static_cast<size_t>(std::max(0, search.max_simulated))) break;
    const bool mirror = std::any_of(finalists.begin(), finalists.end(), [&](size_t other) {
      return scores[other].busiest_link_s == candidate.busiest_link_s && scores[other].link_s_sum == candidate.link_s_sum;
    });
    if (!mirror) finalists.push_back(index);
  }
  if (finalists.size() < 2) return scores;
  for (size_t index : finalists) scores[index].simulated_s = search.simulated_s(scores[index].placement.gpu_of_rank);
  // The simulated orders first, fastest first (ties: the better link scores); then the rest.
  std::stable_sort(scores.begin(), scores.end(), [](const PlacementScore& x, const PlacementScore& y) {
    if (x.simulated_s.has_value() != y.simulated_s.has_value()) return x.simulated_s.has_value();
    return x.simulated_s.has_value() && *x.simulated_s < *y.simulated_s;
  });
  return scores;
}

RankPlacement choose_placement(const Topology& topology, const schedules::CheckedSchedule& checked,
                               const std::string& placement, const PlacementSearch& search) {
  if (placement != "auto") return RankPlacement{placement, order_ranks(topology, checked.schedule().gpus, placement)};
  RankPlacement best = std::move(rank_placements(topology, checked, search).front().placement);
  best.searched = true;
  return best;
}

}  // namespace tessera::topo
