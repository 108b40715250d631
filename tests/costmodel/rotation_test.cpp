// A schedule held by rotation (one period of GPUs' programs, core/schedule.hpp's ProgramForm) against
// the same schedule in full: the checker accepts both, and the analytical model gives the same
// figures, bit for bit, for every GPU. The reference is the full program, checked and priced as
// every other schedule is; nothing below is a figure copied from the output.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <utility>

#include "common/problems.hpp"
#include "tessera/core/error.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

using test::llama_like;

CheckedSchedule ring(const Problem& problem, int32_t gpus, Layout layout, const std::string& variant, int32_t buffers,
                     bool by_rotation) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = layout;
  options.variant = variant;
  options.buffers = buffers;
  options.by_rotation = by_rotation;
  return generate_checked("ring", problem, options);
}

void require_same(const GpuCost& a, const GpuCost& b) {
  REQUIRE(a.sent_bytes == b.sent_bytes);
  REQUIRE(a.received_bytes == b.received_bytes);
  REQUIRE(a.flops == b.flops);
  REQUIRE(a.resident_bytes == b.resident_bytes);
  REQUIRE(a.peak_transfer_bytes == b.peak_transfer_bytes);
  REQUIRE(a.peak_memory_bytes == b.peak_memory_bytes);
  REQUIRE(a.compute_s == b.compute_s);
  REQUIRE(a.comm_s == b.comm_s);
  REQUIRE(a.finish_s == b.finish_s);
}

void require_same(const CostReport& full, const CostReport& rotated) {
  REQUIRE(full.gpus.size() == rotated.gpus.size());
  for (size_t g = 0; g < full.gpus.size(); ++g) {
    INFO("GPU " << g);
    require_same(full.gpus[g], rotated.gpus[g]);
  }
  REQUIRE(full.time_s == rotated.time_s);
  REQUIRE(full.recv_bytes_max == rotated.recv_bytes_max);
  REQUIRE(full.recv_bytes_mean_by_kind == rotated.recv_bytes_mean_by_kind);
  REQUIRE(full.flops_max == rotated.flops_max);
  REQUIRE(full.flops_total == rotated.flops_total);
  REQUIRE(full.peak_memory_bytes_max == rotated.peak_memory_bytes_max);
  REQUIRE(full.peak_transfer_bytes_max == rotated.peak_transfer_bytes_max);
  REQUIRE(full.compute_s_max == rotated.compute_s_max);
  REQUIRE(full.comm_s_max == rotated.comm_s_max);
  REQUIRE(full.bytes_per_flop == rotated.bytes_per_flop);
  REQUIRE(full.comm_over_compute == rotated.comm_over_compute);
  REQUIRE(full.lower_bound_ratio == rotated.lower_bound_ratio);
  REQUIRE(full.lower_bound_time.compute_s == rotated.lower_bound_time.compute_s);
  REQUIRE(full.lower_bound_time.communication_s == rotated.lower_bound_time.communication_s);
  REQUIRE(full.time_over_lower_bound == rotated.time_over_lower_bound);
}

// Generates `algorithm` in full and by rotation: the rotated one must hold the full program's
// ops of its first `period` GPUs, and both must price the same on every GPU.
void require_priced_alike(const std::string& algorithm, const Problem& problem, GeneratorOptions options, int32_t period,
                          const Hardware& hardware) {
  options.by_rotation = false;
  const CheckedSchedule full = generate_checked(algorithm, problem, options);
  options.by_rotation = true;
  const CheckedSchedule rotated = generate_checked(algorithm, problem, options);
  REQUIRE(full.schedule().form == ProgramForm::full);
  REQUIRE(rotated.schedule().form == ProgramForm::rotation);
  REQUIRE(rotated.schedule().period == period);
  size_t held_ops = 0;
  for (const Op& op : full.schedule().ops) held_ops += op.gpu < period ? 1 : 0;
  REQUIRE(rotated.schedule().ops.size() == held_ops);
  require_same(cost_schedule(full, hardware), cost_schedule(rotated, hardware));
}

}  // namespace

TEST_CASE("a ring held by rotation prices as its full program, on every GPU", "[rotation]") {
  struct Case {
    MaskKind mask;
    Layout layout;
    Pass pass;
    std::string variant;
    int32_t buffers;
  };
  const Case cases[] = {
      {MaskKind::causal, Layout::zigzag, Pass::both, "pass-kv", 2},
      {MaskKind::causal, Layout::zigzag, Pass::both, "pass-q", 2},
      {MaskKind::causal, Layout::zigzag, Pass::forward, "pass-kv", 0},
      {MaskKind::causal, Layout::zigzag, Pass::backward, "pass-q", 3},
      {MaskKind::full, Layout::contiguous, Pass::both, "pass-kv", 4},
      {MaskKind::full, Layout::striped, Pass::both, "pass-q", 0},
  };
  // Hardware with every per-message and per-kernel cost on, so that each term is compared.
  Hardware hardware;
  hardware.link_latency_s = 7e-6;
  for (const Case& c : cases)
    for (int32_t gpus : {2, 3, 4, 8, 12, 16, 32}) {
      INFO(to_string(c.mask) << " " << to_string(c.layout) << " " << to_string(c.pass) << " " << c.variant
                             << " buffers " << c.buffers << " on " << gpus << " GPUs");
      GeneratorOptions options;
      options.gpus = gpus;
      options.layout = c.layout;
      options.variant = c.variant;
      options.buffers = c.buffers;
      require_priced_alike("ring", llama_like(int64_t{2 * 3 * 32} * 1024, c.mask, c.pass), options, 1, hardware);
    }
}

namespace {

// A tiled schedule (Mesh a x b, USP u x r) on each tile, in 4 mask, layout, pass and buffer
// cases, held by rotation with the period `period_of(tile)` and in full.
template <typename Period>
void require_tiles_priced_alike(const std::string& algorithm, std::initializer_list<std::pair<int32_t, TileShape>> tiles,
                                Period period_of, const std::string& variant = "") {
  Hardware hardware;
  hardware.link_latency_s = 7e-6;
  struct Case {
    MaskKind mask;
    Layout layout;
    Pass pass;
    int32_t buffers;
  };
  const Case cases[] = {{MaskKind::causal, Layout::zigzag, Pass::both, 2},
                        {MaskKind::causal, Layout::zigzag, Pass::forward, 0},
                        {MaskKind::full, Layout::contiguous, Pass::both, 2},
                        {MaskKind::full, Layout::striped, Pass::backward, 3}};
  for (const Case& c : cases)
    for (const auto& [gpus, tile] : tiles) {
      INFO(to_string(c.mask) << " " << to_string(c.layout) << " " << to_string(c.pass) << " buffers " << c.buffers << " "
                             << algorithm << " " << to_string(tile) << " on " << gpus << " GPUs");
      GeneratorOptions options;
      options.gpus = gpus;
      options.layout = c.layout;
      options.tile = tile;
      options.buffers = c.buffers;
      options.variant = variant;
      require_priced_alike(algorithm, llama_like(int64_t{2 * 3 * 32} * 1024, c.mask, c.pass), options, period_of(tile),
                           hardware);
    }
}

}  // namespace

TEST_CASE("a Mesh held by rotation (one row of its GPU grid) prices as its full program", "[rotation]") {
  // One row of a tiles, or one GPU when the tile is a single row (b = 1) or column (a = 1).
  require_tiles_priced_alike("mesh",
                             {{4, {2, 2}}, {8, {2, 4}}, {8, {4, 2}}, {8, {1, 8}}, {8, {8, 1}}, {16, {4, 4}}, {16, {2, 8}},
                              {16, {8, 2}}, {24, {4, 6}}, {32, {4, 8}}},
                             [](const TileShape& tile) { return tile.second == 1 || tile.first == 1 ? 1 : tile.first; });
}

TEST_CASE("USP held by rotation (one Ulysses group, with its all-to-alls) prices as its full program", "[rotation]") {
  // u x r: Ulysses degree (a divisor of the 8 KV heads) by ring degree. Group g's u GPUs run
  // group 0's programs shifted by g u.
  require_tiles_priced_alike("usp",
                             {{4, {2, 2}}, {8, {2, 4}}, {8, {4, 2}}, {16, {4, 4}}, {16, {2, 8}}, {16, {8, 2}}, {24, {4, 6}},
                              {24, {8, 3}}, {32, {8, 4}}},
                             [](const TileShape& tile) { return tile.first; });
}

TEST_CASE("ATTENTION2D's ring on one row or one column, held by rotation (GPU 0), prices as its full program",
          "[rotation]") {
  // 1 x P: Q around the row, partials to their owners; P x 1: K/V around the column, dK/dV
  // partials to their owners. No permutation either way (GPU (r, c) holds chunk c rows + r).
  // 3 GPUs with no tile: the default grid of a prime count is 1 x 3.
  require_tiles_priced_alike("attention2d", {{4, {1, 4}}, {8, {1, 8}}, {8, {8, 1}}, {12, {12, 1}}, {16, {1, 16}}},
                             [](const TileShape&) { return 1; }, "ring");
  const Problem problem = llama_like(int64_t{2 * 3 * 32} * 1024, MaskKind::causal, Pass::both);
  GeneratorOptions options;
  options.gpus = 3;
  options.variant = "ring";
  require_priced_alike("attention2d", problem, options, 1, Hardware{});
}

TEST_CASE("ATTENTION2D on a grid of rows and columns, or collective, is emitted in full even when asked", "[rotation]") {
  // A 4 x 4 grid permutes K/V (chunk c rows + r to GPU (r, c)), so GPU g's program is not GPU
  // 0's shifted; the collective variant's gathers span the row or the whole ring.
  const Problem problem = llama_like(64 * 1024, MaskKind::causal, Pass::both);
  GeneratorOptions options;
  options.gpus = 16;
  options.by_rotation = true;
  options.variant = "ring";
  options.tile = TileShape{4, 4};
  CHECK(generate_schedule("attention2d", problem, options).form == ProgramForm::full);
  options.variant = "collective";
  options.tile = TileShape{1, 16};
  CHECK(generate_schedule("attention2d", problem, options).form == ProgramForm::full);
  // Causal and contiguous: the GPUs' work differs, so the one ring is emitted in full too.
  options.variant = "ring";
  options.layout = Layout::contiguous;
  CHECK(generate_schedule("attention2d", problem, options).form == ProgramForm::full);
}

TEST_CASE("held by rotation at 128 GPUs, the default problem's figures are the full program's", "[rotation]") {
  // The problem (1M tokens, 32 query and 8 KV heads, causal, zigzag, forward and
  // backward), at a size where every GPU's program has hundreds of ops.
  const Problem problem = llama_like(int64_t{1} << 20, MaskKind::causal, Pass::both);
  // Periods: GPU 0 for a ring, one row of a GPUs for a Mesh a x b, one group of u for USP u x r.
  struct Case {
    std::string algorithm;
    std::optional<TileShape> tile;
    int32_t period;
    std::string variant;
  };
  for (const Case& c : {Case{"ring", std::nullopt, 1, ""}, Case{"mesh", TileShape{8, 16}, 8, ""},
                        Case{"mesh", TileShape{16, 8}, 16, ""}, Case{"usp", TileShape{8, 16}, 8, ""},
                        Case{"attention2d", TileShape{1, 128}, 1, "ring"}, Case{"attention2d", TileShape{128, 1}, 1, "ring"}}) {
    INFO(c.algorithm << " " << c.variant);
    GeneratorOptions options;
    options.gpus = 128;
    options.tile = c.tile;
    options.variant = c.variant;
    require_priced_alike(c.algorithm, problem, options, c.period, Hardware{});
  }
}

TEST_CASE("a ring whose GPUs do unequal work is emitted in full", "[rotation]") {
  // Causal and contiguous: chunk i's row has i + 1 blocks with work, so no GPU's work is GPU 0's shifted.
  const Problem problem = llama_like(64 * 1024, MaskKind::causal, Pass::both);
  BlockGrid grid(problem, Layout::contiguous, 8);
  REQUIRE_FALSE(grid_is_rotation_invariant(grid));
  REQUIRE(ring(problem, 8, Layout::contiguous, "pass-kv", 2, true).schedule().form == ProgramForm::full);
  // Zigzag evens it out: every off-diagonal block is half full, every diagonal one alike.
  REQUIRE(grid_is_rotation_invariant(BlockGrid(problem, Layout::zigzag, 8)));
}

TEST_CASE("a grid expected to allow the rotation, told from the problem alone, allows it", "[rotation]") {
  // rotation_expected never says yes where the grid says no, and it says yes for the two cases a
  // plan meets: causal cut zigzag, and a full mask, on chunks of equal tokens.
  size_t expected = 0;
  for (MaskKind mask : {MaskKind::full, MaskKind::causal})
    for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped})
      for (int32_t gpus : {2, 3, 4, 6, 8, 16})
        for (int64_t seq : {int64_t{128} * gpus, int64_t{128} * gpus + 1, int64_t{74} * gpus + 3}) {
          const Problem problem = llama_like(seq, mask, Pass::both);
          INFO(to_string(mask) << " " << to_string(layout) << " " << gpus << " GPUs, " << seq << " tokens");
          if (!rotation_expected(problem, layout, gpus)) continue;
          ++expected;
          const BlockGrid grid(problem, layout, gpus);
          for (int32_t period = 1; period <= gpus; ++period)
            if (gpus % period == 0) CHECK(grid_is_rotation_invariant(grid, period));
        }
  const Problem causal = llama_like(int64_t{128} * 8, MaskKind::causal, Pass::both);
  CHECK(rotation_expected(causal, Layout::zigzag, 8));
  CHECK_FALSE(rotation_expected(causal, Layout::contiguous, 8));
  CHECK_FALSE(rotation_expected(causal, Layout::striped, 8));
  // Causal and striped, chunk i's tokens are i, i + 8, ... (128 of them): block (7, 0) has
  // 128 x 129 / 2 pairs, its shift (0, 1) 128 x 127 / 2.
  CHECK_FALSE(grid_is_rotation_invariant(BlockGrid(causal, Layout::striped, 8)));
  CHECK_FALSE(rotation_expected(llama_like(int64_t{128} * 8 + 8, MaskKind::causal, Pass::both), Layout::zigzag, 8));
  CHECK(rotation_expected(llama_like(int64_t{128} * 8, MaskKind::full, Pass::both), Layout::contiguous, 8));
  CHECK(expected >= 6 * 2);  // every GPU count, both masks, at 128 tokens a GPU
}

TEST_CASE("the checker refuses a rotation whose shifted copies break the schedule", "[rotation]") {
  const Problem problem = llama_like(64 * 1024, MaskKind::full, Pass::forward);
  Schedule schedule = ring(problem, 4, Layout::contiguous, "pass-kv", 2, true).schedule();
  SECTION("a block computed twice") {
    // GPU 0 computes (0, 0) once more: its shifts, (g, g) on GPU g, twice over.
    schedule.blocks.edit([](std::vector<BlockRef>& blocks) { blocks.push_back(BlockRef{0, 0, 0}); });
    schedule.ops.edit([&](std::vector<Op>& ops) {
      Op op;
      op.kind = OpKind::compute;
      op.first = static_cast<uint32_t>(schedule.blocks.size() - 1);
      op.count = 1;
      ops.push_back(op);
    });
    REQUIRE_THROWS_WITH(check(schedule), Catch::Contains("computed twice") && Catch::Contains("every GPU, shifted"));
  }
  SECTION("a block left out") {
    // GPU 0's last compute op gone: its diagonal is computed on no GPU.
    schedule.ops.edit([](std::vector<Op>& ops) {
      for (size_t index = ops.size(); index-- > 0;)
        if (ops[index].kind == OpKind::compute) {
          ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(index));
          break;
        }
    });
    REQUIRE_THROWS_WITH(check(schedule), Catch::Contains("is never computed, on any GPU"));
  }
  SECTION("an op on another GPU") {
    schedule.ops.edit([](std::vector<Op>& ops) { ops.back().gpu = 1; });
    REQUIRE_THROWS_WITH(check(schedule), Catch::Contains("lists the programs of its first 1 GPU(s) alone"));
  }
  SECTION("a receive whose shifted send carries other data") {
    schedule.items.edit([&](std::vector<DataItem>& items) {
      for (const Op& op : schedule.ops)
        if (op.kind == OpKind::recv) {
          items[op.first].chunk = (items[op.first].chunk + 1) % 4;
          break;
        }
    });
    REQUIRE_THROWS_WITH(check(schedule), Catch::Contains("mismatched transfer"));
  }
  SECTION("a collective reaching past the GPUs held") {
    // USP 2 x 2 held as its first group: an all-to-all that names GPU 2 would stand for its
    // twins, and GPU 2 belongs to the next group.
    GeneratorOptions options;
    options.gpus = 4;
    options.tile = TileShape{2, 2};
    options.by_rotation = true;
    Schedule usp = generate_schedule("usp", problem, options);
    REQUIRE(usp.form == ProgramForm::rotation);
    REQUIRE(usp.period == 2);
    REQUIRE_FALSE(usp.collectives.empty());
    REQUIRE_NOTHROW(check(usp));
    usp.collectives.edit([](std::vector<Collective>& collectives) { collectives.front().transfers.front().dst = 2; });
    REQUIRE_THROWS_WITH(check(usp), Catch::Contains("collective 0 reaches beyond the first 2 GPU(s)"));
  }
  SECTION("consumers that need every GPU's ops say so") {
    REQUIRE_THROWS_WITH(require_full_program(schedule, "simulate"),
                        Catch::Contains("simulate") && Catch::Contains("1 GPU(s) alone"));
  }
}

TEST_CASE("GPUs that run alike get the same figures in the full program too", "[rotation]") {
  // Shifted copies of one program: by symmetry every GPU's figures are GPU 0's. The execution
  // order's queue takes GPUs by index, and walked in it GPU 0 (whose sender is the last GPU)
  // held 2.42 GB where its twins held 2.68 (P = 16, unbounded buffers), and finished a
  // transfer's worth apart (pass-q); the step order (analysis.hpp) has no such odd one out.
  const Problem problem = llama_like(int64_t{1} << 20, MaskKind::causal, Pass::both);
  for (const auto& [variant, buffers] : {std::pair<std::string, int32_t>{"pass-q", 2}, {"pass-kv", 0}, {"pass-q", 0}}) {
    INFO(variant << " buffers " << buffers);
    const CostReport report = cost_schedule(ring(problem, 16, Layout::zigzag, variant, buffers, false), Hardware{});
    for (size_t g = 1; g < report.gpus.size(); ++g) {
      INFO("GPU " << g);
      require_same(report.gpus[0], report.gpus[g]);
    }
  }
}

TEST_CASE("the step order is an execution order", "[rotation][analysis]") {
  const Problem problem = llama_like(64 * 1024, MaskKind::causal, Pass::both);
  for (const std::string algorithm : {"ring", "mesh", "attention2d", "usp", "ulysses", "all-gather"}) {
    INFO(algorithm);
    GeneratorOptions options;
    options.gpus = 8;
    const CheckedSchedule checked = generate_checked(algorithm, problem, options);
    const Schedule& schedule = checked.schedule();
    const ScheduleAnalysis& analysis = checked.analysis();
    REQUIRE(analysis.step_order.size() == schedule.ops.size());
    std::vector<size_t> position(schedule.ops.size(), schedule.ops.size());
    for (size_t at = 0; at < analysis.step_order.size(); ++at) position[analysis.step_order[at]] = at;
    for (size_t index = 0; index < schedule.ops.size(); ++index) {
      REQUIRE(position[index] < schedule.ops.size());  // a permutation
      for (uint32_t dep : analysis.deps_of(index)) REQUIRE(position[dep] < position[index]);
      // A send completes with its recv: whichever comes first, the other's dependencies are done.
      if (analysis.partner[index] >= 0)
        for (uint32_t dep : analysis.deps_of(static_cast<size_t>(analysis.partner[index])))
          REQUIRE(position[dep] < position[index]);
    }
  }
}

TEST_CASE("asked for by rotation, a schedule is estimated at a period's programs, and in full where refused",
          "[rotation][limits]") {
  const Problem problem = llama_like(int64_t{1} << 20, MaskKind::causal, Pass::both);
  GeneratorOptions options;
  options.gpus = 1024;
  // Every estimate holds the block grid's 8 bytes per block (resource_estimate.cpp); the rest is
  // the program's, of which a period's programs are that period over P.
  const double grid_bytes = 8.0 * 1024 * 1024;
  auto program_bytes = [&](const std::string& algorithm, bool by_rotation) {
    GeneratorOptions asked = options;
    asked.by_rotation = by_rotation;
    return estimate_schedule_bytes(algorithm, problem, asked) - grid_bytes;
  };
  CHECK(program_bytes("ring", true) == Approx(program_bytes("ring", false) / 1024));
  options.tile = TileShape{32, 32};
  CHECK(program_bytes("mesh", true) == Approx(program_bytes("mesh", false) * 32 / 1024));
  options.tile = TileShape{1024, 1};  // one row: a period of 1
  CHECK(program_bytes("mesh", true) == Approx(program_bytes("mesh", false) / 1024));
  options.tile = TileShape{8, 128};  // one Ulysses group of 8
  CHECK(program_bytes("usp", true) == Approx(program_bytes("usp", false) * 8 / 1024));
  options.variant = "ring";
  options.tile = TileShape{1, 1024};  // ATTENTION2D's one ring: GPU 0's program
  CHECK(program_bytes("attention2d", true) == Approx(program_bytes("attention2d", false) / 1024));
  options.tile = TileShape{32, 32};  // a grid of rows and columns is emitted in full
  CHECK(program_bytes("attention2d", true) == Approx(program_bytes("attention2d", false)));
  options.variant.clear();

  // Causal and contiguous refuses the rotation: the generator estimates every GPU's program
  // again, and a limit between the two estimates refuses it there.
  Problem contiguous = problem;
  options = GeneratorOptions{};
  options.gpus = 256;
  options.layout = Layout::contiguous;
  options.by_rotation = true;
  const double rotated = estimate_schedule_bytes("ring", contiguous, options);
  GeneratorOptions full = options;
  full.by_rotation = false;
  const double whole = estimate_schedule_bytes("ring", contiguous, full);
  REQUIRE(rotated < 20e6);
  REQUIRE(whole > 20e6);
  setenv("TESSERA_MEMORY_LIMIT", "20MB", 1);
  CHECK_THROWS_WITH(generate_schedule("ring", contiguous, options),
                    Catch::Contains("ring on 256 GPUs needs about") && Catch::Contains("limit of 20 MB"));
  options.layout = Layout::zigzag;  // rotation-invariant: a period's programs fit
  CHECK(generate_schedule("ring", contiguous, options).form == ProgramForm::rotation);
  unsetenv("TESSERA_MEMORY_LIMIT");
}
