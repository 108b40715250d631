// Mesh-Attention plans in an explicit hop order (MeshOrder::explicit_order), the space variant
// "optimal" searches (scenario/mesh_search.hpp). Expected values are derived by hand: the
// counts from the closed form C(a + b - 2, a - 1), computed here by Pascal's rule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/mesh_plan.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

// C(n, k) by Pascal's triangle, independent of mesh_hop_order_count's product formula.
int64_t binomial(int n, int k) {
  std::vector<std::vector<int64_t>> pascal(static_cast<size_t>(n + 1));
  for (int i = 0; i <= n; ++i) {
    pascal[static_cast<size_t>(i)].assign(static_cast<size_t>(i + 1), 1);
    for (int j = 1; j < i; ++j)
      pascal[static_cast<size_t>(i)][static_cast<size_t>(j)] =
          pascal[static_cast<size_t>(i - 1)][static_cast<size_t>(j - 1)] + pascal[static_cast<size_t>(i - 1)][static_cast<size_t>(j)];
  }
  return pascal[static_cast<size_t>(n)][static_cast<size_t>(k)];
}

bool same_plan(const std::vector<MeshPhase>& x, const std::vector<MeshPhase>& y) {
  if (x.size() != y.size()) return false;
  for (size_t phase = 0; phase < x.size(); ++phase) {
    if (x[phase].step != y[phase].step || x[phase].blocks.size() != y[phase].blocks.size()) return false;
    for (size_t index = 0; index < x[phase].blocks.size(); ++index) {
      const auto& p = x[phase].blocks[index];
      const auto& q = y[phase].blocks[index];
      if (p.row != q.row || p.column != q.column || p.completes_row != q.completes_row ||
          p.completes_column != q.completes_column)
        return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("the hop orders of a tile are the C(a+b-2, a-1) interleavings of its hops", "[mesh][optimal]") {
  std::vector<TileShape> tiles;
  for (int32_t a = 1; a <= 5; ++a)
    for (int32_t b = 1; b <= 5; ++b) tiles.push_back({a, b});
  tiles.push_back({2, 8});
  tiles.push_back({8, 2});
  for (const TileShape& tile : tiles) {
    const int32_t a = tile.first, b = tile.second;
    const std::vector<std::string> orders = mesh_hop_orders(a, b);
    const int64_t expected = binomial(a + b - 2, a - 1);
    CHECK(static_cast<int64_t>(orders.size()) == expected);
    CHECK(mesh_hop_order_count(a, b) == expected);
    CHECK(std::set<std::string>(orders.begin(), orders.end()).size() == orders.size());
    for (const std::string& hops : orders) {
      CHECK(std::count(hops.begin(), hops.end(), 'q') == a - 1);
      CHECK(std::count(hops.begin(), hops.end(), 'k') == b - 1);
    }
  }
  // The tiles searched: 20 orders per pass at most (4 x 4: C(6, 3)), 8 for 2 x 8.
  CHECK(mesh_hop_order_count(4, 4) == 20);
  CHECK(mesh_hop_order_count(2, 8) == 8);
  CHECK(mesh_hop_order_count(8, 2) == 8);
  CHECK(mesh_hop_orders(2, 2) == std::vector<std::string>{"kq", "qk"});
}

TEST_CASE("the greedy's hop order given explicitly is the greedy plan", "[mesh][optimal]") {
  // So the search over every order contains the greedy plan: its optimum can only be as fast.
  const std::vector<MeshCosts> costs = {{1, 1, 1}, {1, 2, 0.5}, {3, 1, 0.7}, {0.2, 0.4, 1.3}, {2e-3, 5e-3, 1e-3}};
  for (int32_t a = 1; a <= 4; ++a) {
    for (int32_t b = 1; b <= 8; ++b) {
      for (const MeshCosts& cost : costs) {
        for (bool backward : {false, true}) {
          const auto greedy = plan_mesh_tile(a, b, cost, backward, MeshOrder::greedy);
          const std::string hops = mesh_hop_order(greedy);
          CHECK(same_plan(plan_mesh_tile(a, b, cost, backward, MeshOrder::explicit_order, hops), greedy));
        }
      }
    }
  }
}

TEST_CASE("an explicit order follows the hops given, computing by the greedy's rules", "[mesh][optimal]") {
  // 2 x 2 forward, order "kq", equal costs: the KV hop first, with the one ready block (0, 0);
  // the Q hop next, with the one then ready, (0, 1); the tail computes row 1, the non-local row
  // its partial leaves from, last block (1, 1) completing it.
  const auto phases = plan_mesh_tile(2, 2, MeshCosts{1, 1, 1}, false, MeshOrder::explicit_order, "kq");
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].step == MeshPhase::Step::kv);
  REQUIRE(phases[0].blocks.size() == 1);
  CHECK((phases[0].blocks[0].row == 0 && phases[0].blocks[0].column == 0));
  CHECK(phases[1].step == MeshPhase::Step::q);
  REQUIRE(phases[1].blocks.size() == 1);
  CHECK((phases[1].blocks[0].row == 0 && phases[1].blocks[0].column == 1));
  CHECK(phases[2].step == MeshPhase::Step::none);
  REQUIRE(phases[2].blocks.size() == 2);
  CHECK(phases[2].blocks[1].completes_row);
  CHECK(phases[2].blocks[1].row == 1);
  // An order that does not hold a - 1 'q' and b - 1 'k' is refused.
  CHECK_THROWS_AS(plan_mesh_tile(2, 2, MeshCosts{}, false, MeshOrder::explicit_order, "qq"), std::invalid_argument);
  CHECK_THROWS_AS(plan_mesh_tile(2, 3, MeshCosts{}, false, MeshOrder::explicit_order, "kq"), std::invalid_argument);
}

TEST_CASE("variant optimal is generated from the orders given, and refused without them", "[mesh][optimal]") {
  Problem problem;
  problem.seq_len = 16 * 1024;
  problem.heads = problem.kv_heads = 8;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::causal;
  problem.pass = Pass::both;
  GeneratorOptions options;
  options.gpus = 4;
  options.tile = TileShape{2, 2};
  options.variant = "optimal";
  CHECK_THROWS_AS(generate_checked("mesh", problem, options), UserError);
  options.mesh_hops = GeneratorOptions::MeshHops{"qk", "kq"};
  const CheckedSchedule checked = generate_checked("mesh", problem, options);
  CHECK(checked.schedule().variant == "2x2 zigzag optimal qk/kq");
  options.mesh_hops = GeneratorOptions::MeshHops{"qq", "kq"};
  CHECK_THROWS_AS(generate_checked("mesh", problem, options), UserError);
  options.variant = "greedy";
  options.mesh_hops = GeneratorOptions::MeshHops{"qk", "kq"};
  CHECK_THROWS_AS(generate_checked("mesh", problem, options), UserError);
}

TEST_CASE("the searchable tiles: a, b <= 4, and 2x8 and 8x2", "[mesh][optimal]") {
  for (int32_t a = 1; a <= 4; ++a)
    for (int32_t b = 1; b <= 4; ++b) CHECK(mesh_order_searchable({a, b}));
  CHECK(mesh_order_searchable({2, 8}));
  CHECK(mesh_order_searchable({8, 2}));
  CHECK_FALSE(mesh_order_searchable({4, 8}));
  CHECK_FALSE(mesh_order_searchable({1, 8}));
  CHECK_FALSE(mesh_order_searchable({5, 1}));
  CHECK_FALSE(mesh_order_searchable({2, 16}));
}
