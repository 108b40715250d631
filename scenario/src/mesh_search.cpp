#include "tessera/scenario/mesh_search.hpp"

#include <chrono>
#include <optional>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/schedules/mesh_plan.hpp"

namespace tessera::scenario {

MeshSearchResult search_mesh_order(const Scenario& scenario, ScheduleCache* cache) {
  const auto started = std::chrono::steady_clock::now();
  const Problem& problem = scenario.problem;
  const TileShape tile = scenario.options.tile.value_or(schedules::choose_mesh_tile(problem, scenario.options.gpus));
  const int32_t a = tile.first, b = tile.second;
  if (!schedules::mesh_order_searchable(tile))
    throw UserError("mesh --variant optimal simulates every hop order, for small tiles only (" +
                    std::string(schedules::kMeshSearchLimit) + "): tile " + to_string(tile) + " has " +
                    std::to_string(schedules::mesh_hop_order_count(a, b)) + " orders per pass (C(" +
                    std::to_string(a + b - 2) + ", " + std::to_string(a - 1) + "))");
  // Each order is simulated as the scenario simulates; an analytic scenario by the default flow
  // simulation with the default GPU profile.
  Scenario simulated = scenario;
  if (!simulated.simulation) simulated.simulation = make_simulation(SimulationText{}, scenario.hardware);
  const std::vector<std::string> none{std::string()};
  const std::vector<std::string> forward = problem.has_forward() ? schedules::mesh_hop_orders(a, b) : none;
  const std::vector<std::string> backward = problem.has_backward() ? schedules::mesh_hop_orders(a, b) : none;

  std::optional<schedules::CheckedSchedule> best;
  std::string best_forward, best_backward;
  double best_s = 0;
  int64_t simulations = 0;
  for (const std::string& forward_hops : forward) {
    for (const std::string& backward_hops : backward) {
      // Generated as the scenario generates (the planner's hardware for its network and GPU).
      Scenario candidate = scenario;
      candidate.options.tile = tile;
      candidate.options.variant = "optimal";
      candidate.options.mesh_hops = schedules::GeneratorOptions::MeshHops{forward_hops, backward_hops};
      schedules::CheckedSchedule checked = generate(candidate, cache);
      const double makespan_s = evaluate(checked, simulated).figures.simulated_s.value();
      ++simulations;
      // Ties keep the first order (lexicographic, 'k' before 'q').
      if (!best || makespan_s < best_s) {
        best.emplace(std::move(checked));
        best_forward = forward_hops;
        best_backward = backward_hops;
        best_s = makespan_s;
      }
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return MeshSearchResult{std::move(*best), best_forward, best_backward, best_s,
                          static_cast<int64_t>(forward.size() * backward.size()), simulations, wall_s};
}

}  // namespace tessera::scenario
