// The Mesh-Attention planner weighs transfers against compute on the hardware it is given
// (issue 14): its ring hops cost a fixed per-message part plus bytes over the ring's
// bandwidth, its blocks their mask-exact work over the GPU's rate. Every expected value here
// is derived by hand from the plan's rules (mesh_plan.hpp), never read from the program.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tessera/core/data_size.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/mesh_plan.hpp"
#include "tessera/scenario/plan_hardware.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;
using tessera::scenario::uniform_plan_hardware;

namespace {

// 32K tokens on 64 GPUs as an 8 x 8 tile: 512-token chunks, Llama-like GQA (32 query heads,
// 8 KV heads, d = 128, bf16), causal, forward.
Problem short_gqa_forward() {
  Problem problem;
  problem.seq_len = 32 * 1024;
  problem.heads = 32;
  problem.kv_heads = 8;
  problem.head_dim = problem.head_dim_v = 128;
  problem.dtype = DType::bf16;
  problem.mask.kind = MaskKind::causal;
  problem.pass = Pass::forward;
  return problem;
}

// A cluster on the uniform network: every GPU pair one InfiniBand link, 5 us, plus NCCL's
// default per-message costs. Peaks are the vendors' dense bf16 figures.
Hardware cluster(double peak_flops_per_s, double link_bytes_per_s) {
  Hardware hardware;
  hardware.peak_flops_per_s = peak_flops_per_s;
  hardware.link_bytes_per_s = link_bytes_per_s;
  return hardware;
}
const Hardware kA100At100Gbps = cluster(312e12, 100e9 / 8);
const Hardware kH100At400Gbps = cluster(989e12, 400e9 / 8);

// The ring hops of a plan, in order: 'q' for a Q-ring hop, 'k' for a KV-ring hop.
std::string hop_order(const std::vector<MeshPhase>& phases) {
  std::string order;
  for (const auto& phase : phases)
    if (phase.step != MeshPhase::Step::none) order += phase.step == MeshPhase::Step::q ? 'q' : 'k';
  return order;
}

// The same order as GPU 0 of a generated schedule receives its ring chunks.
std::string received_order(const Schedule& schedule) {
  std::string order;
  for (const Op& op : schedule.ops) {
    if (op.gpu != 0 || op.kind != OpKind::recv) continue;
    for (const DataItem& item : schedule.items_of(op)) {
      if (item.kind == DataKind::Q) order += 'q';
      if (item.kind == DataKind::KV) order += 'k';
    }
  }
  return order;
}

}  // namespace

TEST_CASE("the planner's hop costs come from the hardware given", "[mesh][planner]") {
  const Problem problem = short_gqa_forward();
  const BlockGrid grid(problem, Layout::zigzag, 64);
  // Per chunk of 512 tokens: Q is 512 x 32 x 128 x 2 B = 4 MiB, K and V 512 x 8 x 256 x 2 B =
  // 2 MiB. A hop's fixed part: the link's 5 us, NCCL's 8.4 us base and 14.0 us network latency.
  const double q_bytes = 4194304, kv_bytes = 2097152, hop_fixed_s = 5e-6 + 8.4e-6 + 14.0e-6;
  // A block's mask-exact work: a causal grid holds N (N + 1) / 2 pairs over its 64 x 64 blocks,
  // each pair 4 d FLOPs per query head (research/papers.md).
  const double n = 32 * 1024;
  const double block_flops = 32 * 4.0 * 128 * (n * (n + 1) / 2) / (64.0 * 64.0);
  for (const Hardware* hardware : {&kA100At100Gbps, &kH100At400Gbps}) {
    const MeshCosts costs = mesh_plan_costs(problem, grid, false, uniform_plan_hardware(*hardware));
    CHECK(costs.q_step_s == Approx(hop_fixed_s + q_bytes / hardware->link_bytes_per_s).epsilon(1e-12));
    CHECK(costs.kv_step_s == Approx(hop_fixed_s + kv_bytes / hardware->link_bytes_per_s).epsilon(1e-12));
    CHECK(costs.block_s == Approx(block_flops / (0.6 * hardware->peak_flops_per_s)).epsilon(1e-12));
  }
}

TEST_CASE("the planner's defaults are the default hardware's", "[mesh][planner]") {
  // GeneratorOptions without a scenario (tests, `tessera schedule`) plan for the default H100
  // on its uniform 400 Gb/s network: 60 % of 989 TFLOP/s, 50 GB/s, 5 + 8.4 + 14.0 us a hop.
  const PlanHardware defaults, derived = uniform_plan_hardware(Hardware{});
  CHECK(defaults.flops_per_s == Approx(derived.flops_per_s).epsilon(1e-15));
  CHECK(defaults.q_ring_bytes_per_s == derived.q_ring_bytes_per_s);
  CHECK(defaults.kv_ring_bytes_per_s == derived.kv_ring_bytes_per_s);
  CHECK(defaults.q_ring_latency_s == Approx(derived.q_ring_latency_s).epsilon(1e-12));
  CHECK(defaults.kv_ring_latency_s == Approx(derived.kv_ring_latency_s).epsilon(1e-12));
}

TEST_CASE("a block weighs its mask-exact work", "[mesh][planner]") {
  // The same problem with a full mask has N^2 pairs: causal blocks weigh (N + 1) / (2 N) of it,
  // not the same (the old N^2 / n^2 per block was 2x off in every causal run).
  Problem causal = short_gqa_forward(), full = causal;
  full.mask.kind = MaskKind::full;
  const PlanHardware hardware = uniform_plan_hardware(kH100At400Gbps);
  const double causal_s = mesh_plan_costs(causal, BlockGrid(causal, Layout::zigzag, 64), false, hardware).block_s;
  const double full_s = mesh_plan_costs(full, BlockGrid(full, Layout::contiguous, 64), false, hardware).block_s;
  const double n = 32 * 1024;
  CHECK(causal_s / full_s == Approx((n + 1) / (2 * n)).epsilon(1e-12));
}

TEST_CASE("the Mesh planner's transfer order responds to the hardware", "[mesh][planner]") {
  // Why the orders differ. On both clusters communication is the bottleneck: a KV hop takes
  // 69 us (H100, 400 Gb/s) or 195 us (A100, 100 Gb/s) while a block takes 3.6 us or 11.5 us, and
  // no hop unlocks more than 8 blocks. Principle 2 ("just enough compute") therefore holds
  // nothing back: every block a hop unlocks is computed under the next hop, and the order of
  // the hops is all that is left to choose. Principle 1 ("unlock first, per second of
  // transfer") takes a Q hop when it unlocks more blocks per second than a KV hop: with r Q
  // rows and c KV columns present, a Q hop unlocks c blocks in q_step, a KV hop r blocks in
  // kv_step, so Q goes next when c / r > q_step / kv_step.
  //
  // A Q chunk is twice a KV chunk here (32 query heads of d against 8 KV heads of 2d), but each
  // hop also pays a fixed 27.4 us (link 5 us, NCCL 8.4 + 14.0 us). At 100 Gb/s the bytes
  // dominate: q_step / kv_step = (27.4 + 335.5) / (27.4 + 167.8) = 1.860. At 400 Gb/s the fixed
  // part weighs four times more: (27.4 + 83.9) / (27.4 + 41.9) = 1.605. Walking the rule from
  // (r, c) = (1, 1) on an 8 x 8 tile (KV while c / r is below the ratio, Q above it; a full
  // ring leaves only the other):
  //   (1,1) 1 -> k, (1,2) 2 -> q, (2,2) 1 -> k, (2,3) 1.5 -> k, (2,4) 2 -> q, (3,4) 1.33 -> k,
  //   then (3,5): 5/3 = 1.667 lies between the two ratios. H100: Q is worth it (5 blocks for
  //   1.605 KV hops' time beats 3 blocks for one); A100: it is not, one more KV hop first.
  //   H100 on: (4,5) 1.25 -> k, (4,6) 1.5 -> k, (4,7) 1.75 -> q, (5,7) 1.4 -> k, then the
  //            KV ring is full (5,8): q, q, q.
  //   A100 on: (3,6) 2 -> q, (4,6) 1.5 -> k, (4,7) 1.75 -> k, KV ring full at (4,8): q x 4.
  // The slower network makes the plan lean on the cheaper KV ring longer (a KV-heavy middle,
  // its Q rows later); the faster one, where every hop costs more nearly the same, squares up.
  const std::string h100_order = "kqkkqkqkkqkqqq";
  const std::string a100_order = "kqkkqkkqkkqqqq";
  REQUIRE(h100_order != a100_order);

  const Problem problem = short_gqa_forward();
  const BlockGrid grid(problem, Layout::zigzag, 64);
  const struct {
    const Hardware* hardware;
    const std::string& order;
  } clusters[] = {{&kH100At400Gbps, h100_order}, {&kA100At100Gbps, a100_order}};
  for (const auto& [hardware, expected] : clusters) {
    const PlanHardware plan_hardware = uniform_plan_hardware(*hardware);
    const MeshCosts costs = mesh_plan_costs(problem, grid, false, plan_hardware);
    INFO("peak " << hardware->peak_flops_per_s / 1e12 << " TFLOP/s, " << hardware->link_bytes_per_s / 1e9 << " GB/s");
    // The premise: communication-bound (a hop outlasts the most blocks any hop unlocks).
    REQUIRE(costs.kv_step_s > 8 * costs.block_s);
    CHECK(hop_order(plan_mesh_tile(8, 8, costs, false)) == expected);

    // The generated schedule receives its ring chunks in the plan's order.
    GeneratorOptions options;
    options.gpus = 64;
    options.layout = Layout::zigzag;
    options.tile = TileShape{8, 8};
    options.plan_hardware = plan_hardware;
    CHECK(received_order(generate_schedule("mesh", problem, options)) == expected);
  }
}
