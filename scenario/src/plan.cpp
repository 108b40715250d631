#include "tessera/scenario/plan.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/memory_budget.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/core/resource_limits.hpp"
#include "tessera/costmodel/time_floor.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"
#include "tessera/sim/time_bound.hpp"

namespace tessera::scenario {

namespace {

// Thrown by the gate to stop a candidate after its generation.
struct SetAside {};

// The floor of the model the plan ranks by (Figures::time_s): the simulator's with a simulation.
costmodel::TimeFloor time_floor(const Scenario& scenario, const topo::Topology* simulated_on, const Schedule& schedule,
                                const BlockGrid& grid) {
  if (scenario.simulation) {
    const bool sharing = !scenario.network.device_of_rank.empty() || scenario.simulation->options.device_sharing;
    return sim::simulated_time_floor(schedule, grid, *simulated_on, scenario.simulation->gpu, sharing);
  }
  return costmodel::analytic_time_floor(schedule, grid, scenario.hardware, !scenario.network.topology);
}

// Whether a floor rules a candidate out against a best time (kFloorMargin).
bool above(const costmodel::TimeFloor& floor, double best_s) { return floor.seconds > best_s * (1 + kFloorMargin); }

void lower_to(std::atomic<double>& best_s, double time_s) {
  double known = best_s.load();
  while (time_s < known && !best_s.compare_exchange_weak(known, time_s)) {
  }
}

}  // namespace

std::string candidate_label(const schedules::Candidate& candidate) {
  std::string label = candidate.algorithm;
  if (candidate.options.tile) label += " " + to_string(*candidate.options.tile);
  if (!candidate.options.variant.empty()) label += " " + candidate.options.variant;
  if (candidate.options.layout) label += " " + to_string(*candidate.options.layout);
  return label;
}

PlanResult plan(const Scenario& base, const PlanControl& control) {
  schedules::require_tokens_per_gpu(base.problem, base.options.gpus);
  const std::vector<schedules::Candidate> candidates =
      schedules::plan_candidates(base.problem, base.options.gpus, base.options.layout, base.options.buffers);
  std::vector<PlanEntry> entries(candidates.size());
  Scenario shared = base;
  shared.figures_only = true;  // a ranking keeps the identity and the figures
  if (shared.simulation) shared.simulation->options.cancel = control.cancel;
  // Memory first (schedules/resource_estimate.hpp): a candidate that alone would not fit is a
  // refused entry, not a failed plan; the others run at once as far as their estimates fit
  // together (MemoryBudget). Estimated as generated: where only figures on the uniform network
  // are read (priced_by_rotation: analytical or simulated) and the grid will allow it
  // (rotation_expected), a ring, Mesh, USP or one-ring ATTENTION2D is a period's programs.
  // (Estimated in full, the ring at 4,096 GPUs and 16M tokens was refused at 33.7 GB; held by
  // rotation it takes 0.15 GB.)
  // (On a topology the period held is known once the schedule is: estimated in full.)
  const bool by_rotation = priced_by_rotation(shared) && !shared.network.topology;
  std::vector<char> too_large(candidates.size(), 0);
  std::vector<double> estimate_bytes(candidates.size(), 0);
  std::string first_too_large;
  for (size_t index = 0; index < candidates.size(); ++index) {
    schedules::GeneratorOptions options = candidates[index].options;
    options.by_rotation =
        by_rotation && schedules::rotation_expected(base.problem, options.layout.value_or(schedules::default_layout(base.problem)),
                                                    options.gpus);
    const std::string& algorithm = candidates[index].algorithm;
    try {
      schedules::require_schedule_memory(algorithm, base.problem, options);
      estimate_bytes[index] = schedules::estimate_schedule_bytes(algorithm, base.problem, options);
    } catch (const UserError& error) {
      too_large[index] = 1;
      entries[index].refusal = error.what();
      if (first_too_large.empty()) first_too_large = error.what();
    }
  }
  if (std::all_of(too_large.begin(), too_large.end(), [](char large) { return large != 0; }) && !candidates.empty())
    throw UserError("plan: no schedule fits: " + first_too_large);
  std::mutex progress_mutex;
  size_t done = 0;
  const int threads = control.threads > 0 ? control.threads : std::min(default_threads(), 16);
  MemoryBudget budget(static_cast<double>(memory_limit_bytes()));
  // Smallest estimate first where floors may set candidates aside: the schedules held by
  // rotation, small and quick, are among the best at every size measured (a Mesh tile or USP),
  // so a low best time is known before the large full-program schedules come up.
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!control.exhaustive)
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return estimate_bytes[x] < estimate_bytes[y]; });
  std::atomic<double> best_s{std::numeric_limits<double>::infinity()};
  std::shared_ptr<const topo::Topology> simulated_on = shared.network.topology;
  if (shared.simulation && !simulated_on)
    simulated_on = std::make_shared<const topo::Topology>(uniform_topology(base.options.gpus, base.hardware));
  parallel_for(candidates.size(), threads, [&](size_t position) {
    const size_t index = order[position];
    if (control.cancel && control.cancel->load()) throw sim::SimulationCancelled();
    PlanEntry& entry = entries[index];
    entry.candidate = candidates[index];
    entry.label = candidate_label(entry.candidate);
    if (too_large[index]) {
      if (control.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        control.progress(++done, candidates.size(), entry.label);
      }
      return;
    }
    Scenario scenario = shared;
    scenario.algorithm = entry.candidate.algorithm;
    scenario.options = entry.candidate.options;
    try {
      const MemoryReservation reserved(budget, estimate_bytes[index]);
      const schedules::GeneratedGate gate = [&](const Schedule& schedule, const BlockGrid& grid) {
        entry.floor = time_floor(scenario, simulated_on.get(), schedule, grid);
        if (!control.exhaustive && above(entry.floor, best_s.load())) {
          entry.identity = schedule.identity();
          throw SetAside{};
        }
      };
      Evaluation evaluation = evaluate(generate(scenario, nullptr, gate), scenario);
      entry.identity = evaluation.schedule().identity();
      entry.figures = std::move(evaluation.figures);
      lower_to(best_s, entry.figures->time_s());
    } catch (const UserError& error) {
      entry.refusal = error.what();
    } catch (const SetAside&) {
      entry.set_aside = true;
    }
    if (control.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      control.progress(++done, candidates.size(), entry.label);
    }
  });
  // A candidate checked while the best so far was above its floor, whose floor is above the best
  // of all, is set aside as well: the same entries as any other order of evaluation would give.
  // (One set aside during the run has a floor above a time at least the best: no candidate set
  // aside can rank first.)
  if (!control.exhaustive)
    for (PlanEntry& entry : entries)
      if (entry.figures && above(entry.floor, best_s.load())) {
        entry.figures.reset();
        entry.set_aside = true;
      }
  PlanResult result;
  result.entries = std::move(entries);
  for (size_t index = 0; index < result.entries.size(); ++index)
    if (result.entries[index].figures) result.ranking.push_back(index);
  std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](size_t x, size_t y) {
    return result.entries[x].figures->time_s() < result.entries[y].figures->time_s();
  });
  return result;
}

}  // namespace tessera::scenario
