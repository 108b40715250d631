#pragma once
// One path from a scenario to its figures, for every front end (the command line's plan, cost,
// simulate and validate; sweeps; the GUI): generate and check the schedule (a Mesh planned for
// the network and GPU it will run on), place its ranks, price it with the analytical model
// over the routed paths, count the bytes on every link, and, when asked, simulate it. Front
// ends parse text into a Scenario and format the Evaluation; they decide nothing in between.
#include <memory>
#include <optional>
#include <string>

#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/scenario/schedule_cache.hpp"
#include "tessera/scenario/simulation.hpp"

namespace tessera::scenario {

struct Scenario {
  std::string algorithm;               // a generator's name (schedules/generators.hpp)
  Problem problem;
  schedules::GeneratorOptions options;
  costmodel::Hardware hardware;        // the analytical model and the uniform network
  Network network;                     // a topology and placement, or the uniform network
  std::optional<Simulation> simulation;  // none: the analytical model alone
  // Whether the caller reads the figures alone, never the schedule's ops (cost, plan, sweep):
  // then, priced by the analytical model on the uniform network, a schedule every GPU runs
  // alike up to rotation is held as the programs of a few GPUs (core/schedule.hpp's
  // ProgramForm), which gives the same figures at a fraction of the ops.
  bool figures_only = false;
};

// Where the schedule's traffic lands on a given topology.
struct NetworkFigures {
  std::string topology;
  topo::RankPlacement placement;       // the order used; `searched` when chosen by "auto"
  std::string routing;
  topo::LinkLoads loads;               // bytes per link, the busiest, bytes between servers
  std::string busiest_link;            // its name, empty when no byte crosses a link
};

// The figures of an evaluation, without the schedule's ops or the simulation's per-op times:
// what a ranking keeps of each candidate.
struct Figures {
  costmodel::CostReport cost;             // over the routed paths of the topology, or the uniform network
  std::optional<NetworkFigures> network;  // with a topology
  std::optional<double> simulated_s;      // the simulated makespan, when simulated
  std::optional<costmodel::TimeLowerBound> simulated_bound;  // the time bound priced as the simulator prices

  // What a ranking compares: the simulated makespan when simulated, else the analytic time.
  double time_s() const;
  // time_s() over the time bound of the same model: never below 1.
  double time_over_bound() const;
};

struct Evaluation {
  schedules::CheckedSchedule checked;
  Figures figures;
  // With a simulation: the topology it ran on (the uniform one when none is given), the
  // placement and the run.
  std::shared_ptr<const topo::Topology> simulated_topology;
  topo::RankPlacement simulated_placement;
  std::optional<sim::SimResult> simulation;

  const Schedule& schedule() const { return checked.schedule(); }
};

// Whether generate() asks the generator for a period's programs alone (GeneratorOptions::
// by_rotation): figures alone, priced by the analytical model or by a simulation of GPUs of
// their own (no ranks sharing devices, no channel limit: both are per GPU), on the uniform
// network or on a topology with a placement given (a searched one reads every GPU's
// transfers). On a topology, generate() holds the period the network is symmetric under
// (sim/symmetric_period.hpp), or every GPU's program where none is. A ranking estimates its
// candidates' memory with it too, on the uniform network.
bool priced_by_rotation(const Scenario& scenario);

// The schedule of a scenario, generated and checked: a Mesh planned for the network and GPU it
// will run on (plan_hardware.hpp). UserError when it does not apply, with the reason. With a
// cache, a schedule generated before for the same fields is reused (schedule_cache.hpp): the
// same schedule, so the same figures.
// `gate` sees each schedule generated to be handed back before its check (plan.hpp's floor).
schedules::CheckedSchedule generate(const Scenario& scenario, ScheduleCache* cache = nullptr,
                                    const schedules::GeneratedGate& gate = {});

// Generates, checks and evaluates: evaluate(generate(scenario, cache), scenario). UserError when the schedule does not apply to the problem
// (the reason in words), when the topology is too small, or on bad input.
Evaluation evaluate(const Scenario& scenario, ScheduleCache* cache = nullptr);

// The same for a schedule already fixed (read from a file, or the one an executor ran):
// placed, priced and simulated as it is, never planned again.
Evaluation evaluate(const schedules::CheckedSchedule& checked, const Scenario& scenario);

}  // namespace tessera::scenario
