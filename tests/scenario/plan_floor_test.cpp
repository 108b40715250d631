// A plan's floors (scenario/plan.hpp): the candidates it sets aside are exactly those whose
// floor is above the best time an exhaustive plan finds, every figure it prints is the
// exhaustive plan's, and which are set aside does not depend on the threads.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "tessera/scenario/network.hpp"
#include "tessera/scenario/plan.hpp"

using namespace tessera;
using namespace tessera::scenario;

namespace {

Scenario plan_scenario(const std::string& gpus, const std::string& seq, bool simulated,
                       const NetworkText& network = {}) {
  ProblemText problem;
  problem.gpus = gpus;
  problem.seq = seq;
  Scenario scenario{"", make_problem(problem), make_options(problem, ScheduleText{}), make_hardware({}), {}, std::nullopt};
  scenario.network = make_network(network, scenario.options.gpus);
  if (simulated) scenario.simulation = make_simulation(SimulationText{"h100", "", "flow", 0, ""}, scenario.hardware);
  return scenario;
}

PlanResult run_plan(const Scenario& base, bool exhaustive, int threads) {
  PlanControl control;
  control.exhaustive = exhaustive;
  control.threads = threads;
  return plan(base, control);
}

}  // namespace

TEST_CASE("a plan sets aside exactly the candidates whose floor is above the best time", "[plan][time_floor]") {
  // The uniform network, and servers of 8 GPUs behind InfiniBand with a placement chosen per
  // schedule (where the floors read compute alone, or the simulator's links into a GPU).
  const NetworkText servers{"h100-ib:2", "auto", ""};
  for (const bool simulated : {false, true})
    for (const auto& [gpus, seq, network] :
         {std::tuple{"16", "256K", NetworkText{}}, std::tuple{"64", "1M", NetworkText{}}, std::tuple{"16", "256K", servers}}) {
      const Scenario base = plan_scenario(gpus, seq, simulated, network);
      INFO(gpus << " GPUs, " << seq << " tokens, " << (simulated ? "flow" : "analytic") << ", network "
                << (network.topology.empty() ? "uniform" : network.topology));
      const PlanResult every = run_plan(base, true, 2);
      const PlanResult floored = run_plan(base, false, 2);
      REQUIRE(every.entries.size() == floored.entries.size());
      REQUIRE_FALSE(every.ranking.empty());
      const double best_s = every.ranked(0).figures->time_s();
      size_t set_aside = 0;
      for (size_t index = 0; index < every.entries.size(); ++index) {
        const PlanEntry& whole = every.entries[index];
        const PlanEntry& entry = floored.entries[index];
        INFO(entry.label);
        CHECK_FALSE(whole.set_aside);
        CHECK(entry.refusal == whole.refusal);
        if (!whole.figures) {  // does not apply: refused alike
          CHECK_FALSE(entry.figures);
          CHECK_FALSE(entry.set_aside);
          continue;
        }
        // The floor is the same read of the same generated schedule, and never above its time.
        CHECK(entry.floor.seconds == whole.floor.seconds);
        CHECK(whole.floor.seconds <= whole.figures->time_s() * (1 + 1e-12));
        const bool above = whole.floor.seconds > best_s * (1 + kFloorMargin);
        CHECK(entry.set_aside == above);
        if (entry.set_aside) {
          ++set_aside;
          CHECK_FALSE(entry.figures);
          CHECK(entry.identity.name() == whole.identity.name());
          CHECK(whole.figures->time_s() > best_s);
        } else {
          REQUIRE(entry.figures);
          CHECK(entry.figures->time_s() == whole.figures->time_s());
          CHECK(entry.figures->cost.time_s == whole.figures->cost.time_s);
          CHECK(entry.figures->cost.recv_bytes_max == whole.figures->cost.recv_bytes_max);
          CHECK(entry.figures->cost.peak_memory_bytes_max == whole.figures->cost.peak_memory_bytes_max);
        }
      }
      CHECK(set_aside > 0);  // else this test proves nothing
      // The ranking is the exhaustive one with the set-aside entries left out.
      std::vector<size_t> kept;
      for (const size_t index : every.ranking)
        if (!floored.entries[index].set_aside) kept.push_back(index);
      CHECK(floored.ranking == kept);
      // One thread hands candidates out in the same order without a race: the same entries.
      const PlanResult alone = run_plan(base, false, 1);
      for (size_t index = 0; index < alone.entries.size(); ++index)
        CHECK(alone.entries[index].set_aside == floored.entries[index].set_aside);
    }
}
