#pragma once
// Mesh-Attention's variant "optimal": the ring-hop order of a small tile with the lowest
// simulated makespan, found by exhaustive search. A plan is the order of its a - 1 Q-ring and
// b - 1 KV-ring hops, each computing blocks by the greedy's rules 2 and 3 (mesh_plan.hpp,
// MeshOrder::explicit_order); there are C(a + b - 2, a - 1) orders per pass, and a forward +
// backward problem searches every pair (the square). Each order is generated as the scenario
// would generate it (the planner's hardware of plan_hardware.hpp) and simulated as the scenario
// would simulate it (its network, placement and simulation; an analytic scenario: the default
// flow simulation with the default GPU profile). The greedy's own order is one of them, so the
// optimum's simulated makespan never exceeds the greedy's. Tiles beyond kMeshSearchLimit are
// refused (UserError naming the limit).
#include <cstdint>
#include <string>

#include "tessera/scenario/evaluate.hpp"

namespace tessera::scenario {

struct MeshSearchResult {
  schedules::CheckedSchedule best;   // the schedule of the best order (variant "optimal")
  std::string forward_hops, backward_hops;  // its orders ("qkqk..."; empty for an absent pass)
  double best_s = 0;                 // its simulated makespan
  int64_t orders = 0;                // orders searched: the product over the passes of C(a + b - 2, a - 1)
  int64_t simulations = 0;           // simulations run (one per order)
  double wall_s = 0;                 // wall-clock time of the search
};

// The search for `scenario` (algorithm "mesh"; options.variant and options.mesh_hops are
// ignored: every order is tried). UserError when the tile is beyond the limit. With a cache,
// every order's schedule goes through it.
MeshSearchResult search_mesh_order(const Scenario& scenario, ScheduleCache* cache = nullptr);

}  // namespace tessera::scenario
