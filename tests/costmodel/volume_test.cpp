// Communication volumes, FLOPs and bounds against closed forms derived by hand
// (research/papers.md A.5, research/peers.md 1 and 5.2, DESIGN.md 4). Every expected value
// below is computed from the formula, never taken from the program's output.
#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

Problem mha_forward(int64_t seq_len, MaskKind mask = MaskKind::full) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = 32;
  problem.kv_heads = 32;
  problem.head_dim = 128;
  problem.head_dim_v = 128;
  problem.dtype = DType::bf16;
  problem.mask.kind = mask;
  problem.pass = Pass::forward;
  return problem;
}

CostReport cost_of(const std::string& algorithm, const Problem& problem, int32_t gpus,
                   std::optional<TileShape> tile = std::nullopt, Layout layout = Layout::contiguous,
                   const Hardware& hardware = {}) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.tile = tile;
  options.layout = layout;
  Schedule schedule = generate_schedule(algorithm, problem, options);
  BlockGrid grid(problem, layout, gpus);
  CheckResult check = check_schedule(schedule, grid);
  INFO(check.violation);
  REQUIRE(check.ok());
  return cost_schedule(schedules::check(schedule), hardware);
}

// The default hardware without per-kernel or per-message costs: the closed forms count the
// FLOPs and the wire alone (mesh_planner_hardware_test.cpp checks the costs are applied).
Hardware wire_only() {
  Hardware hardware;
  hardware.kernel_launch_s = 0;
  hardware.message = MessageCosts::none();
  return hardware;
}

double kind_bytes(const CostReport& report, DataKind kind) {
  return report.recv_bytes_mean_by_kind[static_cast<size_t>(kind)];
}

// Q + K + V + partial O, LSE excluded: the papers' count.
double paper_volume_bytes(const CostReport& report) {
  return kind_bytes(report, DataKind::Q) + kind_bytes(report, DataKind::KV) + kind_bytes(report, DataKind::O);
}

}  // namespace

TEST_CASE("ring forward volume is 2(n-1) N d / n per GPU", "[volume]") {
  // d here is the model width H * head_dim; 2 bytes per bf16 element.
  for (int32_t n : {2, 4, 8, 16, 64}) {
    const int64_t seq = 65536;
    const double width = 32 * 128;
    auto report = cost_of("ring", mha_forward(seq), n);
    const double expected = 2.0 * (n - 1) * seq * width / n * 2;
    CHECK(paper_volume_bytes(report) == Approx(expected).epsilon(1e-12));
    CHECK(static_cast<double>(report.recv_bytes_max) == Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("mesh a x b forward volume is 2(a+b-2) N d / n, LSE reported separately", "[volume]") {
  const int64_t seq = 65536;
  const double width = 32 * 128;
  for (auto [a, b] : std::vector<std::pair<int32_t, int32_t>>{{2, 2}, {2, 8}, {8, 2}, {4, 4}, {3, 5}, {8, 8}, {1, 16}}) {
    const int32_t n = a * b;
    auto report = cost_of("mesh", mha_forward(seq), n, TileShape{a, b});
    const double expected = 2.0 * (a + b - 2) * seq * width / n * 2;
    INFO("tile " << a << "x" << b);
    CHECK(paper_volume_bytes(report) == Approx(expected).epsilon(1e-12));
    // LSE: one fp32 per token and head for each of the a - 1 partial outputs received.
    CHECK(kind_bytes(report, DataKind::LSE) == Approx((a - 1) * double(seq) / n * 32 * 4).epsilon(1e-12));
  }
}

TEST_CASE("mesh reduces the forward volume of ring by 77.8, 82.7 and 88.2 percent", "[volume]") {
  // DESIGN.md 4 / research/papers.md A.5: 1 - (a + b - 2) / (n - 1) at 8x8, 8x16 and 16x16.
  const int64_t seq = 1 << 18;
  struct Case {
    int32_t a, b;
    double published_percent;
  };
  for (Case c : {Case{8, 8, 77.8}, Case{8, 16, 82.7}, Case{16, 16, 88.2}}) {
    const int32_t n = c.a * c.b;
    double mesh = paper_volume_bytes(cost_of("mesh", mha_forward(seq), n, TileShape{c.a, c.b}));
    double ring = paper_volume_bytes(cost_of("ring", mha_forward(seq), n));
    double reduction_percent = 100.0 * (1.0 - mesh / ring);
    INFO("n = " << n << " reduction " << reduction_percent);
    CHECK(reduction_percent == Approx(c.published_percent).margin(0.05));
  }
}

TEST_CASE("GQA volumes follow research/peers.md 1", "[volume][gqa]") {
  Problem problem = mha_forward(1 << 16);
  problem.kv_heads = 8;  // h = 32, g = 8
  const double seq = double(problem.seq_len), d = 128, h = 32, g = 8, element = 2;
  for (int32_t gpus : {4, 8}) {
    const double per_gpu_tokens = seq / gpus;
    // Ring pass-KV: (P-1) blocks of (N/P) 2 g d.
    CHECK(kind_bytes(cost_of("ring", problem, gpus), DataKind::KV) ==
          Approx((gpus - 1) * per_gpu_tokens * 2 * g * d * element));
    // Llama-3 all-gather: (P-1)/P N 2 g d.
    CHECK(kind_bytes(cost_of("all-gather", problem, gpus), DataKind::KV) ==
          Approx((gpus - 1.0) / gpus * seq * 2 * g * d * element));
    // Ulysses: (P-1)/P (N/P) (2h + 2g) d for Q, K, V in and O out.
    CHECK(paper_volume_bytes(cost_of("ulysses", problem, gpus)) ==
          Approx((gpus - 1.0) / gpus * per_gpu_tokens * (2 * h + 2 * g) * d * element));
  }
  // USP u x r: (u-1)/u (N/P)(2h+2g) d + (r-1)(N/P) 2 g d.
  for (auto [u, r] : std::vector<std::pair<int32_t, int32_t>>{{2, 4}, {4, 2}, {8, 2}}) {
    const double gpus = u * r, per_gpu_tokens = seq / gpus;
    double expected = (u - 1.0) / u * per_gpu_tokens * (2 * h + 2 * g) * d * element +
                      (r - 1.0) * per_gpu_tokens * 2 * g * d * element;
    INFO("usp " << u << "x" << r);
    CHECK(paper_volume_bytes(cost_of("usp", problem, u * r, TileShape{u, r})) == Approx(expected));
  }
  // Mesh with GQA: Q and O cost h d per token, KV 2 g d: 2(a-1) U_q + 2(b-1) U_kv with U_kv = U_q g / h.
  for (auto [a, b] : std::vector<std::pair<int32_t, int32_t>>{{2, 8}, {4, 4}}) {
    const double gpus = a * b, unit = seq / gpus * h * d * element;
    CHECK(paper_volume_bytes(cost_of("mesh", problem, a * b, TileShape{a, b})) ==
          Approx(2 * (a - 1) * unit + 2 * (b - 1) * unit * g / h));
  }
}

TEST_CASE("ulysses refuses when the GPU count does not divide the heads", "[ulysses]") {
  Problem problem = mha_forward(4096);
  GeneratorOptions options;
  options.gpus = 64;  // 32 heads
  REQUIRE_THROWS_AS(generate_schedule("ulysses", problem, options), UserError);
}

TEST_CASE("FLOPs: forward 4 Bq Bk d per head, backward 2.5x", "[flops]") {
  const int64_t seq = 4096;
  for (int32_t gpus : {1, 3, 8}) {
    Problem problem = mha_forward(seq);
    double forward = cost_of("mesh", problem, gpus).flops_total;
    CHECK(forward == Approx(4.0 * seq * seq * 128 * 32).epsilon(1e-12));
    problem.pass = Pass::backward;
    CHECK(cost_of("ring", problem, gpus).flops_total == Approx(2.5 * 4.0 * seq * seq * 128 * 32).epsilon(1e-12));
    // Causal: N(N+1)/2 pairs per head, whatever the layout.
    problem.mask.kind = MaskKind::causal;
    problem.pass = Pass::forward;
    for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped})
      CHECK(cost_of("ring", problem, gpus, std::nullopt, layout).flops_total ==
            Approx(4.0 * seq * (seq + 1) / 2 * 128 * 32).epsilon(1e-12));
  }
}

TEST_CASE("a compute-only schedule takes its FLOPs over the effective rate", "[time]") {
  // One GPU: no transfers, so the alpha-beta time is the compute time exactly.
  Problem problem = mha_forward(8192);
  Hardware hardware = wire_only();
  double expected = 4.0 * 8192.0 * 8192.0 * 128 * 32 / (hardware.peak_flops_per_s * hardware.compute_efficiency);
  CHECK(cost_of("ring", problem, 1, std::nullopt, Layout::contiguous, hardware).time_s == Approx(expected).epsilon(1e-12));
}

TEST_CASE("a ring step costs latency plus bytes over bandwidth", "[time]") {
  // Two GPUs, full mask: each computes its diagonal block, receives the other KV chunk
  // (alpha + bytes / beta), and computes the second block. With transfers slower than a
  // block, time = block + max(block, transfer) + block... derive: step 0 compute [0, c];
  // transfer [0, t]; second block starts at max(c, t).
  Problem problem = mha_forward(4096);
  Hardware hardware = wire_only();
  const double block_s = 4.0 * 2048 * 2048 * 128 * 32 / hardware.effective_flops_per_s();
  const double transfer_s = hardware.link_latency_s + 2048.0 * 32 * 128 * 2 * 2 / hardware.link_bytes_per_s;
  CHECK(cost_of("ring", problem, 2, std::nullopt, Layout::contiguous, hardware).time_s ==
        Approx(std::max(block_s, transfer_s) + block_s).epsilon(1e-12));
}

TEST_CASE("the lower bound on the worked example of research/peers.md 5.2, heads split or not", "[bound]") {
  // h = 32, g = 8, d = 128, N = 128K, bf16, full mask, forward; m = N / P tokens per GPU. The
  // 424 / 296 / 227 / 124 MB of peers.md 5.2 assumed every GPU evaluates all heads, which USP
  // beats; the expected values here are closed forms of lower_bound.hpp's two arguments
  // (derived by hand, not read from the program). Per token of one lane: x = Q = 256 B and
  // y = K,V = 512 B in, O + LSE = 260 B out; k = 4 query lanes per KV lane, 8 KV lanes.
  //  - P = 32, 64, 256, argument 1 binds: the busiest GPU does 32 N^2 / P triples, 32 m^2 of
  //    them on its own block; the rest fits one KV lane (one holds 4 (N^2 - m^2) more), needing
  //    (alpha + 4m)(beta + m) >= 32 (P - 1) m^2 + 4 m^2 for alpha other queries and beta other
  //    keys. On that hyperbola x alpha + y beta is least at alpha + 4m = sqrt((32P - 28) y / x) m,
  //    which lies inside the lane's caps (4 (N - m), N - m) for these P: 2 sqrt(x y (32P - 28)) m
  //    - (4x + y) m. Filling whole lanes instead (Ulysses-like) costs more: 4 x (N - m) + y (N - m).
  //  - P = 8, argument 2 binds: the 64 (GPU, KV lane) pairs share 32 N^2 (1 - 1/8) = 1792 m^2
  //    triples beyond the free ones. A full pair holds 252 m^2 for 28m other queries and 7m
  //    other keys, so 7 full pairs plus one with (alpha + 4m)(beta + m) >= 28 m^2 + 4 m^2, least
  //    at alpha + 4m = sqrt(32 y / x') m (inside the caps), with x' = 256 + 260 (in and out):
  //    [7 (28 x' + 7 y) + 2 sqrt(32 x' y) - 4 x' - y] m over 8 GPUs.
  // Ulysses/USP move 294 / 124 / 95 / 74 MB (peers.md 1), above each bound.
  Problem problem = mha_forward(128 * 1024);
  problem.kv_heads = 8;
  const double x = 256, y = 512, x_in_out = 256 + 260;
  for (int32_t gpus : {8, 32, 64, 256}) {
    const double m = 128.0 * 1024 / gpus, p = gpus;
    const double expected =
        gpus == 8 ? (7 * (28 * x_in_out + 7 * y) + 2 * std::sqrt(32 * x_in_out * y) - 4 * x_in_out - y) * m / 8
                  : (2 * std::sqrt(x * y * (32 * p - 28)) - (4 * x + y)) * m;
    BlockGrid grid(problem, Layout::contiguous, gpus);
    INFO("P = " << gpus);
    CHECK(communication_lower_bound(problem, gpus, grid).forward_bytes == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("every mesh tile shape passes the checker", "[mesh]") {
  for (int32_t gpus : {6, 12, 16}) {
    for (const TileShape& tile : factor_pairs(gpus)) {
      for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
        for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped}) {
          Problem problem = mha_forward(5 * gpus + 3, mask);
          problem.pass = Pass::both;
          if (mask == MaskKind::documents) problem.mask.document_lengths = {1, 2 * gpus, 3 * gpus + 2};
          GeneratorOptions options;
          options.gpus = gpus;
          options.tile = tile;
          options.layout = layout;
          Schedule schedule = generate_schedule("mesh", problem, options);
          CheckResult check = check_schedule(schedule, BlockGrid(problem, layout, gpus));
          INFO("mesh " << to_string(tile) << " " << to_string(mask) << " " << to_string(layout) << ": "
                       << check.violation);
          CHECK(check.ok());
        }
      }
    }
  }
}

TEST_CASE("mesh refuses a tile that does not multiply to the GPU count", "[mesh]") {
  GeneratorOptions options;
  options.gpus = 12;
  options.tile = TileShape{5, 2};
  REQUIRE_THROWS_WITH(generate_schedule("mesh", mha_forward(4096), options), Catch::Contains("a x b must equal"));
}

TEST_CASE("the chosen mesh tile is the one moving the fewest bytes", "[mesh]") {
  // MHA forward: bytes ~ (a-1)(Q + O + LSE) + (b-1) KV with KV = 2 Q: the optimum leans to a >= b.
  // At n = 16 the candidates give (a-1)*2.03 + (b-1)*2 (in units of Q): 4x4 -> 12.09 is least.
  CHECK(choose_mesh_tile(mha_forward(4096), 16) == TileShape{4, 4});
  // GQA 32:8 makes KV 4x smaller than Q: (a-1)(2 + eps) + (b-1)/2 is least at 2x8 (n = 16):
  // 1x16 -> 7.5, 2x8 -> 5.53, 4x4 -> 7.6.
  Problem gqa = mha_forward(4096);
  gqa.kv_heads = 8;
  CHECK(choose_mesh_tile(gqa, 16) == TileShape{2, 8});
}

TEST_CASE("the simple mesh orders are valid schedules with the same traffic as the greedy one", "[mesh]") {
  // The order changes when things happen, never what moves: byte counts must be identical.
  Problem problem = mha_forward(4096, MaskKind::causal);
  problem.pass = Pass::both;
  for (const char* variant : {"receives-first", "ring-order"}) {
    for (const TileShape& tile : factor_pairs(12)) {
      GeneratorOptions options;
      options.gpus = 12;
      options.tile = tile;
      options.layout = Layout::zigzag;
      options.variant = variant;
      Schedule schedule = generate_schedule("mesh", problem, options);
      BlockGrid grid(problem, Layout::zigzag, 12);
      CheckResult check = check_schedule(schedule, grid);
      INFO(variant << " " << to_string(tile) << ": " << check.violation);
      REQUIRE(check.ok());
      CostReport simple = cost_schedule(schedules::check(schedule), Hardware{});
      CostReport greedy = cost_of("mesh", problem, 12, tile, Layout::zigzag);
      CHECK(simple.recv_bytes_max == greedy.recv_bytes_max);
      CHECK(simple.flops_total == greedy.flops_total);
    }
  }
  GeneratorOptions options;
  options.gpus = 4;
  options.variant = "sideways";
  REQUIRE_THROWS_WITH(generate_schedule("mesh", problem, options), Catch::Contains("greedy, receives-first, ring-order"));
}

TEST_CASE("CommCom ratio: bytes per FLOP of a ring", "[commcom]") {
  // Ring, full mask, MHA, forward: every GPU receives (P-1) K/V chunks of (N/P) H (d + d) 2 bytes
  // and computes 4 (N/P) N d H FLOPs, so bytes per FLOP = (P-1) (N/P) 4 d H / (4 N^2 d H / P)
  // = (P-1) / N.
  const int64_t seq = 8192;
  for (int32_t gpus : {2, 8}) {
    CostReport report = cost_of("ring", mha_forward(seq), gpus);
    CHECK(report.bytes_per_flop == Approx((gpus - 1.0) / seq).epsilon(1e-12));
    CHECK(report.comm_over_compute == Approx(report.comm_s_max / report.compute_s_max));
  }
}
