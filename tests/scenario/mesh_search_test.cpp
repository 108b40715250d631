// Mesh-Attention's variant "optimal" (scenario/mesh_search.hpp): every hop order simulated, the
// fastest kept. The greedy plan is one of the orders, so the optimum is never slower than it;
// ring-order and receives-first compute by other rules, and the expectation that the optimum
// beats them too is this setting's, checked on several tiles.
#include <catch2/catch.hpp>

#include <string>

#include "tessera/core/error.hpp"
#include "tessera/scenario/mesh_search.hpp"
#include "tessera/schedules/mesh_plan.hpp"

using namespace tessera;
using namespace tessera::scenario;

namespace {

// The paper's layer (32 heads of 128, MHA, causal, bf16) with the paper's 256-GPU chunk, 4K
// tokens per GPU, on the uniform 400 Gb/s network, simulated flow-level on H100s.
Scenario mesh_scenario(const std::string& tile, const std::string& pass, const std::string& variant) {
  const int64_t gpus = static_cast<int64_t>(tile[0] - '0') * (tile[2] - '0');
  ProblemText problem;
  problem.gpus = std::to_string(gpus);
  problem.seq = std::to_string(4 * gpus) + "K";
  problem.pass = pass;
  problem.kv_heads = "32";
  ScheduleText schedule;
  schedule.algorithm = "mesh";
  schedule.tile = tile;
  schedule.variant = variant;
  Scenario scenario{"mesh", make_problem(problem), make_options(problem, schedule), make_hardware({}), {}, std::nullopt};
  scenario.simulation = make_simulation(SimulationText{}, scenario.hardware);
  return scenario;
}

double simulated_s(const Scenario& scenario) { return evaluate(scenario).figures.simulated_s.value(); }

}  // namespace

TEST_CASE("the search tries C(a+b-2, a-1) orders per pass, the square for both passes", "[mesh][optimal]") {
  for (const char* tile : {"2x2", "2x3", "3x3", "2x4", "4x2"}) {
    const int32_t a = tile[0] - '0', b = tile[2] - '0';
    const int64_t per_pass = schedules::mesh_hop_order_count(a, b);
    const MeshSearchResult forward = search_mesh_order(mesh_scenario(tile, "forward", "optimal"));
    CHECK(forward.orders == per_pass);
    CHECK(forward.simulations == per_pass);
    CHECK(forward.backward_hops.empty());
    CHECK(forward.best.schedule().variant.find("optimal " + forward.forward_hops) != std::string::npos);
  }
  const MeshSearchResult both = search_mesh_order(mesh_scenario("2x3", "both", "optimal"));
  CHECK(both.orders == 9);  // C(3, 1)^2
  CHECK(both.best.schedule().variant == "2x3 zigzag optimal " + both.forward_hops + "/" + both.backward_hops);
}

TEST_CASE("the optimum is never slower than the greedy, ring-order or receives-first", "[mesh][optimal]") {
  for (const char* pass : {"forward", "backward"}) {
    for (const char* tile : {"2x2", "2x4", "4x2", "3x3", "4x4"}) {
      const Scenario optimal = mesh_scenario(tile, pass, "optimal");
      const MeshSearchResult search = search_mesh_order(optimal);
      // scenario::evaluate takes the same path and reports the same makespan.
      CHECK(simulated_s(optimal) == search.best_s);
      for (const char* heuristic : {"greedy", "ring-order", "receives-first"}) {
        INFO(pass << " " << tile << " " << heuristic);
        CHECK(search.best_s <= simulated_s(mesh_scenario(tile, pass, heuristic)));
      }
    }
  }
}

TEST_CASE("2x2 forward by hand: the Q hop first, so the partial output leaves under compute", "[mesh][optimal]") {
  // Two orders. "qk": the Q hop computes (0, 0); the KV hop (1, 0); the tail computes (1, 1),
  // which completes row 1 (the neighbour's query chunk), so its partial O leaves while (0, 1),
  // the GPU's own row, is computed. "kq": the KV hop computes (0, 0), the Q hop (0, 1), the
  // only ready block; the tail computes row 1, whose partial leaves after the last block with
  // nothing left to hide it. At 16K tokens per GPU (MHA, 400 Gb/s, H100): a Q hop about 2.7 ms,
  // a KV hop 5.4 ms, a causal block about 3.2 ms. "qk": blocks at 0-3.2, 3.2-6.4 (Q in at 2.7),
  // 8.1-11.3 (KV in at 8.1), 11.3-14.5 while the partial (sent at 11.3) travels. "kq": blocks
  // at 0-3.2, 5.4-8.6 (KV in at 5.4), 8.6-11.8, 11.8-15.0, then the partial travels with nothing
  // to hide it. So "qk" ends earlier by about a partial-O transfer: the optimum is "qk", which is
  // also the greedy's order (a Q chunk of MHA is half a KV chunk: it unlocks more blocks per
  // second).
  const Scenario scenario = [] {
    Scenario s = mesh_scenario("2x2", "forward", "optimal");
    ProblemText problem;
    problem.gpus = "4";
    problem.seq = "64K";
    problem.pass = "forward";
    problem.kv_heads = "32";
    s.problem = make_problem(problem);
    return s;
  }();
  const MeshSearchResult search = search_mesh_order(scenario);
  CHECK(search.forward_hops == "qk");
  CHECK(search.best.schedule().variant == "2x2 zigzag optimal qk");
  Scenario greedy = scenario;
  greedy.options.variant = "greedy";
  CHECK(search.best_s == simulated_s(greedy));
  Scenario other = scenario;
  other.options.mesh_hops = schedules::GeneratorOptions::MeshHops{"kq", ""};
  CHECK(search.best_s < evaluate(other).figures.simulated_s.value());
}

TEST_CASE("tiles beyond the limit are refused, naming it", "[mesh][optimal]") {
  for (const char* tile : {"4x8", "1x8", "2x16"}) {
    Scenario scenario = mesh_scenario("2x2", "forward", "optimal");
    ProblemText problem;
    const int32_t a = std::stoi(std::string(tile).substr(0, std::string(tile).find('x')));
    const int32_t b = std::stoi(std::string(tile).substr(std::string(tile).find('x') + 1));
    problem.gpus = std::to_string(a * b);
    problem.seq = "64K";
    scenario.problem = make_problem(problem);
    scenario.options.gpus = a * b;
    scenario.options.tile = TileShape{a, b};
    try {
      generate(scenario);
      FAIL("tile " << tile << " was searched");
    } catch (const UserError& error) {
      CHECK(std::string(error.what()).find(schedules::kMeshSearchLimit) != std::string::npos);
    }
  }
}
