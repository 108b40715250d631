// Every generator x mask x layout x GPU count, forward and backward, passes the checker.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/resource_estimate.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

Problem small_problem(MaskKind mask, int32_t gpus, Pass pass) {
  Problem problem;
  problem.seq_len = 3 * gpus + 7;  // odd, never a multiple of the GPU count (for P > 1)
  problem.heads = 720;             // divisible by 1..6, 8, 9, 12, 16: Ulysses applies there
  problem.kv_heads = 1;            // MQA: KV heads are replicated when they are split
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.pass = pass;
  problem.mask.kind = mask;
  if (mask == MaskKind::sliding_window) problem.mask.window_tokens = 5;
  if (mask == MaskKind::documents) {
    // Documents of 5, 1, 2*gpus, and the rest.
    int64_t rest = problem.seq_len - 6 - 2 * gpus;
    problem.mask.document_lengths = {5, 1, 2 * gpus, rest};
  }
  return problem;
}

bool ulysses_applies(const Problem& problem, int32_t u) {
  return problem.heads % u == 0 && (problem.kv_heads % u == 0 || u % problem.kv_heads == 0);
}

}  // namespace

TEST_CASE("every generator passes the checker for every mask, layout and GPU count", "[generators]") {
  const std::string algorithm =
      GENERATE(as<std::string>{}, "ring", "all-gather", "ulysses", "usp", "attention2d", "mesh");
  const std::vector<int32_t> gpu_counts = {1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 64, 256};
  {
    for (int32_t gpus : gpu_counts) {
      for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents}) {
        for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped}) {
          for (Pass pass : {Pass::forward, Pass::backward}) {
            Problem problem = small_problem(mask, gpus, pass);
            GeneratorOptions options;
            options.gpus = gpus;
            options.layout = layout;
            INFO(algorithm << " P=" << gpus << " mask=" << to_string(mask) << " layout=" << to_string(layout)
                           << " pass=" << to_string(pass));
            if (algorithm == "ulysses" && !ulysses_applies(problem, gpus)) {
              CHECK_THROWS_AS(generate_schedule(algorithm, problem, options), UserError);
              continue;
            }
            if (algorithm == "ulysses" && gpus > 16) continue;  // P^3 blocks: covered up to 16
            std::string violation;
            try {
              Schedule schedule = generate_schedule(algorithm, problem, options);
              BlockGrid grid(problem, layout, gpus);
              violation = check_schedule(schedule, grid).violation;
            } catch (const UserError& error) {
              violation = std::string("generator refused: ") + error.what();
            }
            INFO(violation);
            CHECK(violation.empty());
            if (!violation.empty()) return;  // one failure per algorithm is enough to read
          }
        }
      }
    }
  }
}

TEST_CASE("attention2d: both variants on every grid shape pass the checker", "[generators][attention2d]") {
  const std::string variant = GENERATE(as<std::string>{}, "collective", "ring");
  for (int32_t gpus : {1, 2, 3, 4, 6, 8, 9, 12, 16}) {
    for (const TileShape& grid_shape : factor_pairs(gpus)) {
      for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents}) {
        for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped}) {
          Problem problem = small_problem(mask, gpus, Pass::both);
          GeneratorOptions options;
          options.gpus = gpus;
          options.layout = layout;
          options.tile = grid_shape;
          options.variant = variant;
          Schedule schedule = generate_schedule("attention2d", problem, options);
          std::string violation = check_schedule(schedule, BlockGrid(problem, layout, gpus)).violation;
          INFO(schedule.name() << " P=" << gpus << " mask=" << to_string(mask) << ": " << violation);
          CHECK(violation.empty());
          if (!violation.empty()) return;
        }
      }
    }
  }
}

TEST_CASE("attention2d ring: the k-th partial goes k places on, so each round pairs the GPUs one to one",
          "[generators][attention2d]") {
  // 3 x 4 grid, full mask: every GPU computes against every owner of its row and every chunk of
  // its column's band, so every partial is sent. GPU (r, c) is r * 4 + c; it holds K/V chunk
  // c * 3 + r. Forward: O partials to (r, c + k), from (r, c - k), k = 1..3. Backward: dK/dV of
  // band chunk c * 3 + (r + k) mod 3 to that chunk's owner, k = 0..2; chunk g's owner hears from
  // column g / 3, row (g mod 3 - k) mod 3, k = 0..2 (itself left out either way).
  const int32_t rows = 3, cols = 4;
  Problem problem = small_problem(MaskKind::full, rows * cols, Pass::both);
  GeneratorOptions options;
  options.gpus = rows * cols;
  options.layout = Layout::contiguous;
  options.tile = TileShape{rows, cols};
  options.variant = "ring";
  const Schedule schedule = generate_schedule("attention2d", problem, options);
  for (int32_t gpu = 0; gpu < rows * cols; ++gpu) {
    const int32_t r = gpu / cols, c = gpu % cols;
    std::vector<int32_t> o_to, o_from, dkv_to, dkv_from, want_o_to, want_o_from, want_dkv_to, want_dkv_from;
    for (const Op& op : schedule.ops) {
      if (op.gpu != gpu || (op.kind != OpKind::send && op.kind != OpKind::recv)) continue;
      const DataKind kind = schedule.items_of(op)[0].kind;
      if (kind == DataKind::O) (op.kind == OpKind::send ? o_to : o_from).push_back(op.peer);
      if (kind == DataKind::dKV) (op.kind == OpKind::send ? dkv_to : dkv_from).push_back(op.peer);
    }
    for (int32_t k = 1; k < cols; ++k) {
      want_o_to.push_back(r * cols + (c + k) % cols);
      want_o_from.push_back(r * cols + (c - k + cols) % cols);
    }
    for (int32_t k = 0; k < rows; ++k) {
      const int32_t chunk = c * rows + (r + k) % rows;
      if (chunk != gpu) want_dkv_to.push_back(chunk);
      const int32_t src = ((gpu % rows - k + rows) % rows) * cols + gpu / rows;
      if (src != gpu) want_dkv_from.push_back(src);
    }
    INFO("GPU " << gpu);
    CHECK(o_to == want_o_to);
    CHECK(o_from == want_o_from);
    CHECK(dkv_to == want_dkv_to);
    CHECK(dkv_from == want_dkv_from);
  }
}

TEST_CASE("usp: every Ulysses x ring split passes the checker", "[generators][usp]") {
  for (int32_t gpus : {4, 6, 8, 12, 16}) {
    for (const TileShape& split : factor_pairs(gpus)) {
      for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
        Problem problem = small_problem(mask, gpus, Pass::both);
        problem.kv_heads = 2;  // GQA: replicated when u > 2
        GeneratorOptions options;
        options.gpus = gpus;
        options.layout = Layout::zigzag;
        options.tile = split;
        if (problem.kv_heads % split.first != 0 && split.first % problem.kv_heads != 0) {
          CHECK_THROWS_AS(generate_schedule("usp", problem, options), UserError);
          continue;
        }
        Schedule schedule = generate_schedule("usp", problem, options);
        std::string violation = check_schedule(schedule, BlockGrid(problem, Layout::zigzag, gpus)).violation;
        INFO(schedule.name() << " " << to_string(mask) << ": " << violation);
        CHECK(violation.empty());
      }
    }
  }
}

// The tile a generator was asked for (or chose) is carried typed on the schedule, so that no
// reader parses the free-text variant; schedules without a tile carry none.
TEST_CASE("tiled generators record their tile on the schedule", "[generators]") {
  const Problem problem = small_problem(MaskKind::causal, 12, Pass::both);
  GeneratorOptions options;
  options.gpus = 12;
  options.tile = TileShape{3, 4};
  for (const char* algorithm : {"mesh", "attention2d", "usp"})
    CHECK(generate_schedule(algorithm, problem, options).tile == TileShape{3, 4});
  options.tile.reset();
  CHECK(generate_schedule("mesh", problem, options).tile == choose_mesh_tile(problem, 12));
  CHECK_FALSE(generate_schedule("ring", problem, options).tile.has_value());
  CHECK_FALSE(generate_schedule("all-gather", problem, options).tile.has_value());
}

TEST_CASE("generators refuse a schedule past the memory limit before building its grid", "[generators][limits]") {
  using namespace tessera;
  Problem problem;
  problem.seq_len = 1 << 20;
  schedules::GeneratorOptions options;
  // A ring's state grows with the blocks: P^2 (the grid's cache, its ops per step and row).
  options.gpus = 128;
  const double at_128 = schedules::estimate_schedule_bytes("ring", problem, options);
  options.gpus = 256;
  const double at_256 = schedules::estimate_schedule_bytes("ring", problem, options);
  CHECK(at_256 == Approx(4 * at_128));
  // Ulysses: every head group computes every block, P^3.
  problem.heads = problem.kv_heads = 256;
  const double ulysses_256 = schedules::estimate_schedule_bytes("ulysses", problem, options);
  options.gpus = 128;
  CHECK(ulysses_256 == Approx(8 * schedules::estimate_schedule_bytes("ulysses", problem, options)).epsilon(0.01));

  setenv("TESSERA_MEMORY_LIMIT", "20MB", 1);
  options.gpus = 65536;  // the grid alone: 8 B x 2^32 = 34 GB
  CHECK_THROWS_WITH(schedules::generate_schedule("ring", problem, options),
                    Catch::Contains("ring on 65536 GPUs needs about") && Catch::Contains("limit of 20 MB"));
  options.gpus = 16;
  CHECK(schedules::generate_checked("ring", problem, options).schedule().gpus == 16);
  unsetenv("TESSERA_MEMORY_LIMIT");
}

TEST_CASE("generators share one block grid per problem while it is held, counted whole", "[generators]") {
  // schedules/src/shared_grids.hpp: a plan's candidates read the same grid instead of counting
  // their own. Shared only for the very same problem, layout and GPUs; and counted before it is
  // handed out, so that threads reading it at once never fill its cache.
  const Problem problem = small_problem(MaskKind::causal, 4, Pass::both);  // 19 tokens
  GeneratorOptions options;
  options.gpus = 4;
  options.layout = Layout::zigzag;
  const GeneratedSchedule ring = generate_unchecked("ring", problem, options);
  options.tile = TileShape{2, 2};
  const GeneratedSchedule mesh = generate_unchecked("mesh", problem, options);
  CHECK(ring.grid == mesh.grid);
  options.layout = Layout::contiguous;
  CHECK(generate_unchecked("mesh", problem, options).grid != ring.grid);
  Problem longer = problem;
  longer.seq_len = 38;
  options.layout = Layout::zigzag;
  CHECK(generate_unchecked("mesh", longer, options).grid != ring.grid);
  // Every block counted: the same pairs as a grid of its own, and causal's total in closed form,
  // 19 * 20 / 2 pairs per head.
  const BlockGrid own(problem, Layout::zigzag, 4);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(ring.grid->pairs(i, j) == own.pairs(i, j));
  CHECK(ring.grid->total_pairs() == 19 * 20 / 2);
}
