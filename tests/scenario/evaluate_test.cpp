// scenario::evaluate and scenario::plan, the one path of every front end. Each expectation is
// derived from the parts evaluate is made of, called directly, or from the problem itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "tessera/core/error.hpp"
#include "tessera/scenario/plan.hpp"
#include "tessera/schedules/resource_estimate.hpp"

using namespace tessera;
using namespace tessera::scenario;

namespace {

Scenario small_scenario(const std::string& algorithm) {
  ProblemText problem;
  problem.gpus = "8";
  problem.seq = "16K";
  ScheduleText schedule;
  schedule.algorithm = algorithm;
  Scenario scenario{algorithm, make_problem(problem), make_options(problem, schedule), make_hardware({}), {}, std::nullopt};
  return scenario;
}

}  // namespace

TEST_CASE("evaluate on the uniform network is the cost model of the checked schedule", "[evaluate]") {
  const Scenario scenario = small_scenario("ring");
  const Evaluation evaluation = evaluate(scenario);
  const auto checked = schedules::generate_checked("ring", scenario.problem, scenario.options);
  const costmodel::CostReport direct = costmodel::cost_schedule(checked, scenario.hardware);
  CHECK(evaluation.figures.cost.time_s == direct.time_s);
  CHECK(evaluation.figures.cost.recv_bytes_max == direct.recv_bytes_max);
  CHECK_FALSE(evaluation.figures.network.has_value());  // no topology: no links to load
  CHECK_FALSE(evaluation.simulation.has_value());
  CHECK(evaluation.figures.time_s() == direct.time_s);
}

TEST_CASE("evaluate with a topology and a simulation places once for both", "[evaluate]") {
  Scenario scenario = small_scenario("ring");
  scenario.network = make_network(NetworkText{"h100-ib:1", "round-robin", ""}, 8);
  scenario.simulation = make_simulation(SimulationText{}, scenario.hardware);
  const Evaluation evaluation = evaluate(scenario);
  REQUIRE(evaluation.figures.network.has_value());
  REQUIRE(evaluation.simulation.has_value());
  // The routed cost, the link loads and the simulation share one placement: the one named.
  const std::vector<int32_t> named = topo::order_ranks(*scenario.network.topology, 8, "round-robin");
  CHECK(evaluation.figures.network->placement.gpu_of_rank == named);
  CHECK(evaluation.simulated_placement.gpu_of_rank == named);
  CHECK(evaluation.simulated_topology == scenario.network.topology);
  // The ranked time is the simulated makespan, never below its bound.
  CHECK(evaluation.figures.time_s() == evaluation.simulation->makespan_s);
  CHECK(evaluation.figures.time_over_bound() >= 1.0);
  // Every byte the schedule sends crosses at least one link of the one server.
  CHECK(evaluation.figures.network->loads.busiest_edge_bytes > 0);
}

TEST_CASE("a schedule that does not apply is a UserError with the reason", "[evaluate]") {
  Scenario scenario = small_scenario("ulysses");
  scenario.problem.heads = 6;  // 6 heads do not split over 8 GPUs
  scenario.problem.kv_heads = 6;
  CHECK_THROWS_AS(evaluate(scenario), UserError);
}

TEST_CASE("plan evaluates every candidate once and ranks the applicable ones by time", "[plan]") {
  Scenario base = small_scenario("");
  base.problem.heads = 12;  // Ulysses-style head splits of 8 do not apply: some candidates refuse
  base.problem.kv_heads = 4;
  const PlanResult plan = scenario::plan(base);
  const auto candidates = schedules::plan_candidates(base.problem, 8, base.options.layout, base.options.buffers);
  REQUIRE(plan.entries.size() == candidates.size());
  size_t refused = 0;
  std::set<std::string> labels;
  for (size_t index = 0; index < plan.entries.size(); ++index) {
    const PlanEntry& entry = plan.entries[index];
    CHECK(entry.label == candidate_label(candidates[index]));
    labels.insert(entry.label);
    if (!entry.figures) {
      ++refused;
      CHECK_FALSE(entry.refusal.empty());
    }
  }
  CHECK(labels.size() == candidates.size());  // labels tell candidates apart (layout included)
  CHECK(refused > 0);
  CHECK(plan.ranking.size() + refused == plan.entries.size());
  for (size_t position = 1; position < plan.ranking.size(); ++position)
    CHECK(plan.ranked(position - 1).figures->time_s() <= plan.ranked(position).figures->time_s());
  // The best entry is what evaluate() gives for its candidate alone.
  const PlanEntry& best = plan.ranked(0);
  Scenario alone = base;
  alone.algorithm = best.candidate.algorithm;
  alone.options = best.candidate.options;
  CHECK(evaluate(alone).figures.time_s() == best.figures->time_s());
}

TEST_CASE("plan estimates a candidate's memory as it will be generated: by rotation where it will be", "[plan][limits]") {
  // 256 GPUs, causal, zigzag: a ring is priced from GPU 0's program (schedules/rotation.hpp), the
  // contiguous ring in full. A limit between the ring's two estimates admits the one and refuses
  // the other; estimated in full, the ring was refused with it.
  ProblemText text;
  text.gpus = "256";
  text.seq = "1M";
  Scenario base{"", make_problem(text), make_options(text, ScheduleText{}), make_hardware({}), {}, std::nullopt};
  schedules::GeneratorOptions options = base.options;
  options.by_rotation = true;
  const double rotated = schedules::estimate_schedule_bytes("ring", base.problem, options);
  options.by_rotation = false;
  const double whole = schedules::estimate_schedule_bytes("ring", base.problem, options);
  REQUIRE(rotated * 10 < whole);
  const std::string limit = std::to_string(static_cast<int64_t>(std::sqrt(rotated * whole))) + "B";
  setenv("TESSERA_MEMORY_LIMIT", limit.c_str(), 1);
  const PlanResult plan = scenario::plan(base);
  unsetenv("TESSERA_MEMORY_LIMIT");
  auto entry = [&](const std::string& label) -> const PlanEntry& {
    for (const PlanEntry& candidate : plan.entries)
      if (candidate.label == label) return candidate;
    FAIL("no candidate " << label);
    return plan.entries.front();
  };
  const PlanEntry& ring = entry("ring");
  INFO(ring.refusal);
  REQUIRE(ring.figures.has_value());
  CHECK(ring.identity.form == ProgramForm::rotation);
  // Its figures are the full program's, here priced in full without a limit.
  Scenario alone = base;
  alone.algorithm = "ring";
  CHECK(ring.figures->time_s() == evaluate(alone).figures.time_s());
  // The contiguous ring's grid refuses the rotation (causal work grows along the sequence):
  // estimated in full, past the limit.
  const PlanEntry& contiguous = entry("ring contiguous");
  CHECK_FALSE(contiguous.figures.has_value());
  CHECK_THAT(contiguous.refusal, Catch::Contains("needs about") && Catch::Contains("more than the limit"));
}

TEST_CASE("plan refuses a problem with fewer tokens than GPUs", "[plan]") {
  Scenario base = small_scenario("");
  base.problem.seq_len = 4;
  CHECK_THROWS_WITH(scenario::plan(base), Catch::Contains("every GPU needs at least one token"));
}
