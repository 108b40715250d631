#pragma once
// "auto" placement: for one schedule, the rank order that loads its busiest link least and,
// among near-ties, runs fastest in the simulator when one is given. The candidates come from
// the schedule's traffic, not its name: the rank distances that carry the most bytes (a mesh's
// Q-rings at distance 1, its KV-rings at distance a) give stride permutations that bring each
// kind of ring onto consecutive positions, and the cluster gives GPU sequences that keep
// consecutive positions in a server or on a rail (placement.hpp names them all).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/schedules/checker.hpp"
#include "tessera/topologies/link_loads.hpp"
#include "tessera/topologies/placement.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

struct PlacementScore {
  RankPlacement placement;
  double busiest_link_s = 0;       // the most loaded link (a half-duplex cable counts once): bytes / bandwidth
  int64_t busiest_link_bytes = 0;  // its bytes
  double link_s_sum = 0;           // every link's bytes / bandwidth, summed: fewer and faster hops
  std::optional<double> simulated_s;
};

struct PlacementSearch {
  // Optional: the schedule's simulated time under a placement. Without it, near-ties go to
  // the smaller link_s_sum.
  std::function<double(const std::vector<int32_t>& gpu_of_rank)> simulated_s;
  double near_tie = 0.02;     // busiest link within 2 % of the least: simulate to decide
  int32_t max_simulated = 3;  // simulate at most this many orders
};

// The candidate orders' names for a schedule's traffic on a topology (order_ranks spells them).
std::vector<std::string> candidate_orders(const Topology& topology, int32_t ranks,
                                          const std::vector<RankTraffic>& traffic);

// Every distinct candidate placement scored, best first: least busiest_link_s, then (among
// near-ties, when search.simulated_s is given) least simulated time, then least link_s_sum.
std::vector<PlacementScore> rank_placements(const Topology& topology, const schedules::CheckedSchedule& checked,
                                            const PlacementSearch& search = {});

// A named order (placement.hpp), or for "auto" the best of rank_placements.
RankPlacement choose_placement(const Topology& topology, const schedules::CheckedSchedule& checked,
                               const std::string& placement, const PlacementSearch& search = {});

}  // namespace tessera::topo
