// A schedule held by rotation at its own period, copied to a larger one (period_copies.hpp),
// against the generator asked for that period and the checker run on its ops: the same ops,
// blocks and items, and the same analysis, field for field. The reference is the generator and
// the checker themselves, as every other schedule is made; nothing below is copied from output.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "common/problems.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/period_copies.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

using test::llama_like;

GeneratorOptions held_by_rotation(int32_t gpus, int32_t period) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.by_rotation = true;
  options.rotation_period = period;
  return options;
}

// The generator held at options.rotation_period and checked: what held_at_period must equal.
CheckedSchedule generated_at_period(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  return check_generated(generate_unchecked(algorithm, problem, options), algorithm, options);
}

// Held at the schedule's own period (rotation_period 0), then copied.
CheckedSchedule copied_to_period(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  GeneratorOptions own = options;
  own.rotation_period = 0;
  const CheckedSchedule at_own = generated_at_period(algorithm, problem, own);
  REQUIRE(at_own.schedule().form == ProgramForm::rotation);
  REQUIRE(at_own.schedule().period < options.rotation_period);
  std::optional<CheckedSchedule> copies = held_at_period(at_own, options.rotation_period);
  REQUIRE(copies.has_value());
  return std::move(*copies);
}

void require_same(const CheckedSchedule& generated, const CheckedSchedule& copied) {
  const Schedule &a = generated.schedule(), &b = copied.schedule();
  REQUIRE(a.form == ProgramForm::rotation);
  REQUIRE(b.form == a.form);
  REQUIRE(b.period == a.period);
  REQUIRE(same_program(a, b));
  REQUIRE(b.ops == a.ops.vector());  // op for op, where same_program would allow none
  REQUIRE(b.blocks == a.blocks.vector());
  REQUIRE(b.items == a.items.vector());
  REQUIRE(b.stream_buffers == a.stream_buffers);
  const ScheduleAnalysis &x = generated.analysis(), &y = copied.analysis();
  REQUIRE(y.dep_offsets == x.dep_offsets);
  REQUIRE(y.deps == x.deps);
  REQUIRE(y.partner == x.partner);
  REQUIRE(y.collective_ops == x.collective_ops);
  REQUIRE(y.step_order == x.step_order);
  REQUIRE(y.op_pairs == x.op_pairs);
  REQUIRE(y.memory_one_sequence.size() == x.memory_one_sequence.size());
  for (size_t g = 0; g < x.memory_one_sequence.size(); ++g) {
    INFO("GPU " << g);
    REQUIRE(y.memory_one_sequence[g].resident_bytes == x.memory_one_sequence[g].resident_bytes);
    REQUIRE(y.memory_one_sequence[g].transfer_bytes == x.memory_one_sequence[g].transfer_bytes);
  }
  for (const DataItem& item : a.items) REQUIRE(y.item_sizes.one_sequence_bytes(item) == x.item_sizes.one_sequence_bytes(item));
}

}  // namespace

TEST_CASE("a ring held at a multiple of its period equals the generator's and the checker's", "[period_copies]") {
  for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) {
    for (const std::string variant : {"", "pass-q"}) {
      for (int32_t buffers : {2, 0}) {
        for (int32_t period : {2, 4, 8}) {
          INFO(to_string(pass) << " " << variant << " buffers " << buffers << " period " << period);
          GeneratorOptions options = held_by_rotation(16, period);
          options.variant = variant;
          options.buffers = buffers;
          options.layout = Layout::zigzag;
          const Problem problem = llama_like(16 * 1024, MaskKind::causal, pass);
          require_same(generated_at_period("ring", problem, options), copied_to_period("ring", problem, options));
        }
      }
    }
  }
  // A full mask on contiguous chunks holds by rotation too.
  GeneratorOptions options = held_by_rotation(12, 6);
  options.layout = Layout::contiguous;
  const Problem problem = llama_like(12 * 512, MaskKind::full, Pass::both);
  require_same(generated_at_period("ring", problem, options), copied_to_period("ring", problem, options));
}

TEST_CASE("a Mesh held at a multiple of its period equals the generator's and the checker's", "[period_copies]") {
  // Tiles a x b hold one row of a GPUs (mesh_rotation_period); 1 x b holds one GPU.
  for (const TileShape tile : {TileShape{2, 8}, TileShape{4, 4}, TileShape{1, 16}}) {
    for (Pass pass : {Pass::forward, Pass::both}) {
      const int32_t own = tile.second == 1 ? 1 : tile.first;
      for (int32_t period = own * 2; period < 16; period *= 2) {
        INFO(to_string(tile) << " " << to_string(pass) << " period " << period);
        GeneratorOptions options = held_by_rotation(16, period);
        options.tile = tile;
        const Problem problem = llama_like(16 * 1024, MaskKind::causal, pass);
        require_same(generated_at_period("mesh", problem, options), copied_to_period("mesh", problem, options));
      }
    }
  }
}

TEST_CASE("ATTENTION2D's one ring held at a multiple of its period equals the generator's and the checker's",
          "[period_copies]") {
  for (const TileShape grid : {TileShape{1, 16}, TileShape{16, 1}}) {
    INFO(to_string(grid));
    GeneratorOptions options = held_by_rotation(16, 4);
    options.tile = grid;
    options.variant = "ring";
    const Problem problem = llama_like(16 * 1024, MaskKind::causal, Pass::both);
    require_same(generated_at_period("attention2d", problem, options), copied_to_period("attention2d", problem, options));
  }
}

TEST_CASE("generate_checked at a larger period gives the copies, and refuses a period that does not hold",
          "[period_copies]") {
  GeneratorOptions options = held_by_rotation(16, 8);
  const Problem problem = llama_like(16 * 1024, MaskKind::causal, Pass::both);
  require_same(generated_at_period("ring", problem, options), generate_checked("ring", problem, options));
  // A Mesh of 4 x 4 holds rows of 4 GPUs: 6 is no multiple of 4, and 3 does not divide 16.
  options.tile = TileShape{4, 4};
  options.rotation_period = 6;
  REQUIRE_THROWS_AS(generate_checked("mesh", problem, options), UserError);
  options.tile.reset();
  options.rotation_period = 3;
  REQUIRE_THROWS_AS(generate_checked("ring", problem, options), UserError);
}

TEST_CASE("copies are refused where they cannot be made from the held period", "[period_copies]") {
  const Problem problem = llama_like(16 * 1024, MaskKind::causal, Pass::both);
  const CheckedSchedule ring = generated_at_period("ring", problem, held_by_rotation(16, 0));
  REQUIRE(ring.schedule().period == 1);
  REQUIRE_FALSE(held_at_period(ring, 1).has_value());   // not larger
  REQUIRE_FALSE(held_at_period(ring, 16).has_value());  // every GPU: the generator's full form
  REQUIRE_FALSE(held_at_period(ring, 3).has_value());   // does not divide 16
  GeneratorOptions full = held_by_rotation(16, 0);
  full.by_rotation = false;
  REQUIRE_FALSE(held_at_period(generated_at_period("ring", problem, full), 4).has_value());  // not held by rotation
  // USP's all-to-alls are collectives: its generator holds no period but its own.
  GeneratorOptions usp = held_by_rotation(16, 0);
  usp.tile = TileShape{4, 4};
  const CheckedSchedule held_usp = generated_at_period("usp", problem, usp);
  REQUIRE(held_usp.schedule().form == ProgramForm::rotation);
  REQUIRE_FALSE(held_at_period(held_usp, 8).has_value());
}
