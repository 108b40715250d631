// The lower bounds of lower_bound.hpp: closed forms worked by hand (never read from the
// program's output), and a property test that no schedule any generator makes, on any tile
// shape or variant, receives fewer bytes than the byte bound or finishes before the time bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

Problem forward_problem(int64_t seq_len, int64_t heads, int64_t kv_heads) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = heads;
  problem.kv_heads = kv_heads;
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.dtype = DType::bf16;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  return problem;
}

CostReport cost_of(const std::string& algorithm, const Problem& problem, int32_t gpus, const Hardware& hardware = {}) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = Layout::contiguous;
  Schedule schedule = generate_schedule(algorithm, problem, options);
  BlockGrid grid(problem, Layout::contiguous, gpus);
  CheckResult check = check_schedule(schedule, grid);
  INFO(check.violation);
  REQUIRE(check.ok());
  return cost_schedule(schedules::check(schedule), hardware);
}

// Seeded draws, the same on every run and every standard library: mt19937_64 is specified bit
// for bit, the library's distributions are not, so a draw is a plain remainder.
class Draw {
 public:
  explicit Draw(uint64_t seed) : engine_(seed) {}
  int64_t between(int64_t low, int64_t high) {  // inclusive
    return low + static_cast<int64_t>(engine_() % static_cast<uint64_t>(high - low + 1));
  }
  template <typename T>
  T one_of(const std::vector<T>& values) {
    return values[static_cast<size_t>(between(0, static_cast<int64_t>(values.size()) - 1))];
  }

 private:
  std::mt19937_64 engine_;
};

// Zigzag cuts the sequence into 2P pieces: `thin_zigzag` draws fewer tokens than pieces, so some
// chunks hold one piece or none; otherwise a zigzag problem has at least 2P tokens.
Problem random_problem(Draw& draw, int32_t gpus, Layout layout, bool thin_zigzag) {
  Problem problem;
  problem.batch = draw.between(1, 2);
  problem.seq_len = gpus * draw.between(1, 5) + draw.between(0, gpus);
  if (layout == Layout::zigzag) problem.seq_len = thin_zigzag ? draw.between(gpus, 2 * gpus - 1)
                                                              : std::max<int64_t>(problem.seq_len, 2 * gpus);
  problem.kv_heads = draw.between(1, 4);
  problem.heads = problem.kv_heads * draw.between(1, 4);
  problem.head_dim = draw.one_of<int64_t>({8, 16, 32});
  problem.head_dim_v = problem.head_dim * draw.one_of<int64_t>({1, 2}) / draw.one_of<int64_t>({1, 2});
  problem.dtype = draw.one_of<DType>({DType::bf16, DType::fp16, DType::fp32});
  problem.pass = draw.one_of<Pass>({Pass::forward, Pass::backward, Pass::both});
  problem.mask.kind =
      draw.one_of<MaskKind>({MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents});
  if (problem.mask.kind == MaskKind::sliding_window) problem.mask.window_tokens = draw.between(1, problem.seq_len);
  if (problem.mask.kind == MaskKind::documents) {
    int64_t left = problem.seq_len;
    while (left > 0) {
      const int64_t length = draw.between(1, left);
      problem.mask.document_lengths.push_back(length);
      left -= length;
    }
  }
  return problem;
}

// The machine: the default, one whose compute is slow (compute bound), one whose network is
// slow (communication bound), and one with no per-message or launch costs.
Hardware random_hardware(Draw& draw) {
  Hardware hardware;
  switch (draw.between(0, 3)) {
    case 1: hardware.peak_flops_per_s = 1e9; break;
    case 2: hardware.link_bytes_per_s = 1e6; break;
    case 3:
      hardware.message = MessageCosts::none();
      hardware.kernel_launch_s = 0;
      break;
    default: break;
  }
  return hardware;
}

// One way to call a generator.
struct Option {
  std::string algorithm;
  std::optional<TileShape> tile;
  std::string variant;
  std::string label() const {
    std::string text = algorithm;
    if (tile) text += " " + to_string(*tile);
    if (!variant.empty()) text += " " + variant;
    return text;
  }
};

// Variants worth covering per generator ("" = the default). Only a UserError from the generator
// marks a combination as not applicable, so a variant that does not exist yet is covered as
// soon as it does.
std::vector<std::string> variants_of(const std::string& algorithm) {
  if (algorithm == "ring") return {"pass-kv", "pass-q"};
  if (algorithm == "attention2d") return {"collective", "ring"};
  if (algorithm == "mesh") return {"greedy", "receives-first", "ring-order"};
  return {""};
}

// Generators that take a tile: every a x b with a * b = P; the others take the default.
bool takes_tile(const std::string& algorithm) {
  return algorithm == "mesh" || algorithm == "attention2d" || algorithm == "usp";
}

// Every generator of the registry, except the two that read a file. Mesh's two simple orders
// move the same bytes as its greedy one (volume_test) and differ only in time, so they are
// tried on some problems only (`every_mesh_order`), which keeps the sanitizer run short.
std::vector<Option> every_option(int32_t gpus, bool every_mesh_order) {
  std::vector<Option> options;
  for (const GeneratorInfo& info : list_generators()) {
    if (info.name == "file" || info.name == "assignment") continue;
    std::vector<std::optional<TileShape>> tiles = {std::nullopt};
    if (takes_tile(info.name)) {
      tiles.clear();
      for (const TileShape& tile : factor_pairs(gpus)) tiles.emplace_back(tile);
    }
    std::vector<std::string> variants = variants_of(info.name);
    if (info.name == "mesh" && !every_mesh_order) variants.resize(1);
    for (const auto& tile : tiles)
      for (const std::string& variant : variants) options.push_back({info.name, tile, variant});
  }
  return options;
}

std::string document_list(const Problem& problem) {
  std::string text;
  for (int64_t length : problem.mask.document_lengths) text += (text.empty() ? "" : ",") + std::to_string(length);
  return "{" + text + "}";
}

std::string describe(const Problem& problem, int32_t gpus, Layout layout, const Hardware& hardware) {
  std::ostringstream text;
  text << "P=" << gpus << " N=" << problem.seq_len << " B=" << problem.batch << " H=" << problem.heads
       << " G=" << problem.kv_heads << " d=" << problem.head_dim << " dv=" << problem.head_dim_v << " "
       << to_string(problem.dtype) << " mask=" << to_string(problem.mask.kind)
       << " window=" << problem.mask.window_tokens
       << " documents=" << document_list(problem) << " pass=" << to_string(problem.pass)
       << " layout=" << to_string(layout) << " flops=" << hardware.peak_flops_per_s
       << " link=" << hardware.link_bytes_per_s;
  return text.str();
}

// What the property test found over many random problems.
struct Findings {
  std::vector<std::string> invalid, below_bytes, below_time;  // one line per failing schedule
  std::map<std::string, int64_t> costed;                       // schedules per generator and variant
  int64_t schedules = 0;
};

// `problems` random problems (P from `fewest_gpus` to `most_gpus`, small N, every mask, pass,
// GQA ratio, dtype, batch, buffers and machine) x every generator x every tile shape and
// variant it accepts: each schedule is checked, costed, and held against both bounds.
void cost_random_problems(uint64_t seed, int problems, int32_t fewest_gpus, int32_t most_gpus, bool thin_zigzag,
                          Findings& found) {
  constexpr double kRounding = 1e-9;  // relative: floating point only
  Draw draw(seed);
  for (int index = 0; index < problems; ++index) {
    const auto gpus = static_cast<int32_t>(draw.between(fewest_gpus, most_gpus));
    const Layout layout =
        thin_zigzag ? Layout::zigzag : draw.one_of<Layout>({Layout::contiguous, Layout::zigzag, Layout::striped});
    const Problem problem = random_problem(draw, gpus, layout, thin_zigzag);
    const Hardware hardware = random_hardware(draw);
    const int32_t buffers = draw.one_of<int32_t>({0, 2});  // unlimited, or production's double buffering
    const BlockGrid grid(problem, layout, gpus);
    for (const Option& option : every_option(gpus, index % 4 == 0)) {
      GeneratorOptions options;
      options.gpus = gpus;
      options.layout = layout;
      options.tile = option.tile;
      options.variant = option.variant;
      options.buffers = buffers;
      Schedule schedule;
      try {
        schedule = generate_schedule(option.algorithm, problem, options);
      } catch (const UserError&) {
        continue;  // does not apply to this problem
      }
      auto where = [&] { return option.label() + " on " + describe(problem, gpus, layout, hardware); };
      const CheckResult check = check_schedule(schedule, grid);
      if (!check.ok()) {
        found.invalid.push_back(where() + ": " + check.violation);
        continue;
      }
      const CostReport report = cost_schedule(schedules::check(schedule), hardware);
      const double bound_bytes = report.lower_bound.total_bytes();
      if (static_cast<double>(report.recv_bytes_max) < bound_bytes * (1 - kRounding))
        found.below_bytes.push_back(where() + ": receives " + std::to_string(report.recv_bytes_max) + " B, bound " +
                                    std::to_string(bound_bytes) + " B");
      const TimeLowerBound& bound_time = report.lower_bound_time;
      if (report.time_s < bound_time.total_s() * (1 - kRounding))
        found.below_time.push_back(where() + ": takes " + std::to_string(report.time_s) + " s, bound: compute " +
                                   std::to_string(bound_time.compute_s) + " s, communication " +
                                   std::to_string(bound_time.communication_s) + " s");
      ++found.costed[option.algorithm + (option.variant.empty() ? "" : " " + option.variant)];
      ++found.schedules;
    }
  }
}

// A count and the first few failures: one broken generator does not bury the others.
std::string first_few(const std::vector<std::string>& failures) {
  std::string text = std::to_string(failures.size()) + " schedules";
  for (size_t k = 0; k < std::min<size_t>(failures.size(), 8); ++k) text += "\n  " + failures[k];
  return text;
}

void check_findings(const Findings& found) {
  {
    INFO("refused by the checker: " << first_few(found.invalid));
    CHECK(found.invalid.empty());
  }
  {
    INFO("receiving less than the byte bound: " << first_few(found.below_bytes));
    CHECK(found.below_bytes.empty());
  }
  {
    INFO("faster than the time bound: " << first_few(found.below_time));
    CHECK(found.below_time.empty());
  }
}

}  // namespace

TEST_CASE("full-mask MHA forward at P = 4: the bound worked by hand", "[bound]") {
  // N = 64, H = G = 1, d = d_v = 64, bf16: m = 16 tokens per GPU, own block m^2 pairs. Per token:
  // x = Q = 128 B and y = K,V = 256 B in, O + LSE = 132 B out.
  //  - Argument 1: the busiest GPU does N^2 / 4 = 16 m^2 pairs, m^2 of them its own. With alpha
  //    other queries and beta other keys it reaches m^2 + alpha (m + beta) + m beta, so it needs
  //    (alpha + m)(beta + m) >= 4 m^2. On that hyperbola x alpha + y beta is least at
  //    alpha + m = 2 m sqrt(y / x) = 2.83 m (inside the caps 0..3m), giving (4 sqrt(x y) - x - y) m.
  //    The corners cost more: all other queries 3 m x, all other keys 3 m y.
  //  - Argument 2: the 4 GPUs share N^2 - 4 m^2 = 12 m^2 pairs beyond their own blocks, all in
  //    one GPU's reach (it can add 15 m^2), so (alpha + m)(beta + m) >= 13 m^2 with x' = x + 132
  //    (each query touched comes in and its partial goes out), least at alpha + m =
  //    sqrt(13 y / x') m = 3.58 m: (2 sqrt(13 x' y) - x' - y) m over 4 GPUs. The grid-line
  //    candidates (3m other queries and 2.25m keys, or the reverse) cost more.
  const double m = 16, x = 128, y = 256, x_in_out = 128 + 132;
  const double busiest = (4 * std::sqrt(x * y) - x - y) * m;
  const double mean = (2 * std::sqrt(13 * x_in_out * y) - x_in_out - y) * m / 4;
  Problem problem = forward_problem(64, 1, 1);
  BlockGrid grid(problem, Layout::contiguous, 4);
  LowerBound bound = communication_lower_bound(problem, 4, grid);
  CHECK(bound.busiest_inputs_bytes == Approx(busiest).epsilon(1e-9));
  CHECK(bound.mean_traffic_bytes == Approx(mean).epsilon(1e-9));
  CHECK(bound.total_bytes() == Approx(std::max(busiest, mean)).epsilon(1e-9));
  CHECK(bound.forward_bytes == bound.total_bytes());
  CHECK(bound.backward_bytes == 0);
  // A ring receives the 3 other K,V chunks: 3 m y.
  CHECK(cost_of("ring", problem, 4).recv_bytes_max == Approx(3 * m * y).epsilon(1e-9));
}

TEST_CASE("MQA forward at P = 2: ring pass-KV meets the bound exactly", "[bound]") {
  // H = 8 query heads on G = 1 KV head, N = 64, m = 32, d = d_v = 64, bf16: x = Q = 128 B per
  // token of a query head, y = K,V = 256 B per token of the KV head. The busiest GPU does
  // 8 N^2 / 2 = 16 m^2 triples, 8 m^2 on its own block; its own queries of all 8 heads against
  // beta other keys add 8 m beta, so beta = m (every other key: y m bytes) suffices, while
  // other queries help only m + beta triples each for x bytes (alpha = 8m: 8 m x bytes); on the
  // hyperbola (alpha + 8m)(beta + m) >= 16 m^2 the stationary point alpha + 8m = sqrt(32) m is
  // below alpha = 0, so the least is beta = m: y m. Argument 2 gives the same: both GPUs take the
  // other's keys, 2 y m over 2 GPUs. Ring pass-KV receives exactly that: one K,V chunk.
  const double m = 32, y = 256;
  Problem problem = forward_problem(64, 8, 1);
  BlockGrid grid(problem, Layout::contiguous, 2);
  LowerBound bound = communication_lower_bound(problem, 2, grid);
  CHECK(bound.busiest_inputs_bytes == Approx(y * m).epsilon(1e-9));
  CHECK(bound.mean_traffic_bytes == Approx(y * m).epsilon(1e-9));
  const CostReport ring = cost_of("ring", problem, 2);
  CHECK(static_cast<double>(ring.recv_bytes_max) == Approx(y * m).epsilon(1e-9));
  CHECK(ring.lower_bound_ratio == Approx(1.0).epsilon(1e-9));
  CHECK(ring.lower_bound_ratio >= 1.0);  // meeting the bound exactly never prints below 1
}

TEST_CASE("both passes: the bound is at least each pass's own, and at most their sum", "[bound]") {
  // Q and K,V may serve both passes once received, so the bound for both is not the sum; it
  // can never be below either pass alone, and counting every kind once per pass is an upper limit.
  Problem problem = forward_problem(96, 8, 2);
  problem.mask.kind = MaskKind::causal;
  for (int32_t gpus : {2, 3, 4, 6, 8}) {
    problem.pass = Pass::both;
    BlockGrid grid(problem, Layout::zigzag, gpus);
    LowerBound both = communication_lower_bound(problem, gpus, grid);
    INFO("P = " << gpus);
    CHECK(both.total_bytes() >= std::max(both.forward_bytes, both.backward_bytes));
    CHECK(both.total_bytes() <= both.forward_bytes + both.backward_bytes);
    problem.pass = Pass::forward;
    CHECK(communication_lower_bound(problem, gpus, grid).total_bytes() == Approx(both.forward_bytes));
  }
}

TEST_CASE("one GPU: the time bound is its compute, which the alpha-beta model takes exactly", "[bound][time]") {
  // One block of N^2 pairs, all heads in one kernel: 2 N^2 (d + d_v) H FLOPs at the effective
  // rate plus one launch. Nothing is received, so the bytes bound is 0.
  Problem problem = forward_problem(4096, 8, 2);
  Hardware hardware;
  const double expected_s = 2.0 * 4096 * 4096 * (64 + 64) * 8 / hardware.effective_flops_per_s() +
                            hardware.kernel_launch_s;
  const CostReport report = cost_of("ring", problem, 1, hardware);
  CHECK(report.lower_bound.total_bytes() == 0);
  CHECK(report.lower_bound_time.compute_s == Approx(expected_s).epsilon(1e-9));
  CHECK(report.lower_bound_time.communication_s == 0);
  CHECK(report.time_over_lower_bound == Approx(1.0).epsilon(1e-9));
  CHECK(report.time_over_lower_bound >= 1.0);
}

TEST_CASE("no schedule of any generator beats the byte or time bound", "[bound][property]") {
  // 2,000 problems on up to 8 GPUs, and 100 more on 9 to 16 for their tile shapes (12: six of
  // them, 16: five): a few seconds, since the sanitizer build runs them too.
  constexpr int kProblems = 2000;
  Findings found;
  cost_random_problems(0x7e55e7a, kProblems, 1, 8, false, found);
  cost_random_problems(0x16c9a1, 100, 9, 16, false, found);
  check_findings(found);
  // Every generator and variant applied somewhere, else the test would prove nothing of it.
  for (const GeneratorInfo& info : list_generators()) {
    if (info.name == "file" || info.name == "assignment") continue;
    for (const std::string& variant : variants_of(info.name)) {
      const std::string label = info.name + (variant.empty() ? "" : " " + variant);
      INFO(label);
      CHECK(found.costed.count(label) == 1);
    }
  }
  CHECK(found.schedules >= kProblems);
}

// Zigzag with fewer tokens than its 2P pieces leaves chunks with one piece or none, and blocks
// without work where a full mask would have some. attention2d (collective) and usp then move,
// in their collectives, partials of chunks they have no blocks of: as zeros, as a collective's
// fixed-shape buffers would (the checker accepts that). The bounds hold there too.
TEST_CASE("no schedule beats the bounds on zigzag layouts thinner than their pieces", "[bound][property]") {
  Findings found;
  cost_random_problems(0x2162a6, 100, 2, 8, true, found);
  check_findings(found);
}

TEST_CASE("the remembered bound is the one computed afresh, whichever field changes between calls", "[bound]") {
  // Problems that differ from a base in one field each, asked in turn and again in reverse (so a
  // key that left a field out would hand one problem another's bound): every answer equals the
  // bound computed without the table, bit for bit.
  Problem base = forward_problem(4096, 8, 2);
  base.mask.kind = MaskKind::causal;
  base.pass = Pass::both;
  struct Case {
    Problem problem;
    int32_t gpus;
    Layout layout;
  };
  std::vector<Case> cases{{base, 4, Layout::zigzag}};
  auto vary = [&](auto change) {
    Case changed = cases.front();
    change(changed);
    cases.push_back(changed);
  };
  vary([](Case& c) { c.problem.batch = 3; });
  vary([](Case& c) { c.problem.seq_len = 6144; });
  vary([](Case& c) { c.problem.heads = 16; });
  vary([](Case& c) { c.problem.kv_heads = 8; });
  vary([](Case& c) { c.problem.head_dim = c.problem.head_dim_v = 96; });
  vary([](Case& c) { c.problem.head_dim_v = 32; });
  vary([](Case& c) { c.problem.dtype = DType::fp32; });
  vary([](Case& c) { c.problem.pass = Pass::forward; });
  vary([](Case& c) { c.problem.mask.kind = MaskKind::full; });
  vary([](Case& c) {
    c.problem.mask.kind = MaskKind::sliding_window;
    c.problem.mask.window_tokens = 512;
  });
  vary([](Case& c) {
    c.problem.mask.kind = MaskKind::sliding_window;
    c.problem.mask.window_tokens = 1024;
  });
  vary([](Case& c) {
    c.problem.mask.kind = MaskKind::documents;
    c.problem.mask.document_lengths = {1024, 3072};
  });
  vary([](Case& c) {
    c.problem.mask.kind = MaskKind::documents;
    c.problem.mask.document_lengths = {2048, 2048};
  });
  vary([](Case& c) { c.gpus = 8; });
  // Chunks of unequal length (4099 tokens on 4 GPUs), where the layout moves tokens between them
  // (striped chunks come out as contiguous ones do here, so the layout case is contiguous).
  vary([](Case& c) { c.problem.seq_len = 4099; });
  vary([](Case& c) {
    c.problem.seq_len = 4099;
    c.layout = Layout::contiguous;
  });

  std::vector<const Case*> order;
  for (const Case& c : cases) order.push_back(&c);
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) order.push_back(&*it);
  for (const Case* c : order) {
    const BlockGrid grid(c->problem, c->layout, c->gpus);
    const LowerBound remembered = communication_lower_bound(c->problem, c->gpus, grid);
    const LowerBound fresh = communication_lower_bound_unremembered(c->problem, c->gpus, grid);
    CHECK(remembered.received_bytes == fresh.received_bytes);
    CHECK(remembered.forward_bytes == fresh.forward_bytes);
    CHECK(remembered.backward_bytes == fresh.backward_bytes);
    CHECK(remembered.busiest_inputs_bytes == fresh.busiest_inputs_bytes);
    CHECK(remembered.mean_traffic_bytes == fresh.mean_traffic_bytes);
  }
  // The changes are ones the bound sees: no two cases share a figure set, so the check above
  // would catch a key that confused them.
  std::set<std::vector<double>> distinct;
  for (const Case& c : cases) {
    const LowerBound bound = communication_lower_bound_unremembered(c.problem, c.gpus, BlockGrid(c.problem, c.layout, c.gpus));
    distinct.insert({bound.received_bytes, bound.forward_bytes, bound.backward_bytes, bound.busiest_inputs_bytes,
                     bound.mean_traffic_bytes});
  }
  CHECK(distinct.size() == cases.size());
}
