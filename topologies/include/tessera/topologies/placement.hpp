#pragma once
// Placement: which GPU of the topology each schedule rank runs on.
#include <string>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::topo {

// A placement and the name of its order (for "auto", the order the search chose), so that a
// report can show it and a user can ask for it again.
struct RankPlacement {
  std::string order;
  std::vector<int32_t> gpu_of_rank;
  bool searched = false;  // chosen by "auto"
  std::string label() const { return searched ? order + " (auto)" : order; }
};

// Named orders. A GPU sequence says which GPU positions 0, 1, ... take:
//   "linear"          GPU r;
//   "round-robin"     consecutive positions on different servers;
//   "rail-aligned"    servers in order, every other one walked backwards, so ring hops between
//                     servers join GPUs of the same index: one rail on rail-optimised fabrics;
//   "rail-aligned:S"  the same with blocks of S GPUs: every other server takes its blocks in
//                     reverse order (a ring of stride S then leaves and enters on one rail);
//   "packed:K"        blocks of K consecutive positions never split across servers (GPUs may
//                     stay idle);
//   "list:3,0,1,2"    explicit.
// "stride:T+SEQUENCE" first orders the ranks by (r mod T, r div T), so that ranks r, r + T,
// r + 2T, ... take consecutive positions (e.g. a mesh's KV-rings, stride a).
// UserError for an unknown name, a bad parameter or more ranks than GPUs.
std::vector<int32_t> order_ranks(const Topology& topology, int32_t ranks, const std::string& order);

// A named order, or "auto": the search of placement_search.hpp (without simulation).
std::vector<int32_t> place_ranks(const Topology& topology, const schedules::CheckedSchedule& checked,
                                 const std::string& placement);

}  // namespace tessera::topo
