#include "tessera/schedules/generators.hpp"

#include <array>
#include <stdexcept>

#include "tessera/core/error.hpp"
#include "tessera/schedules/mesh_plan.hpp"
#include "tessera/schedules/period_copies.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"
#include "tessera/schedules/schedule_json.hpp"
#include "shared_grids.hpp"

namespace tessera::schedules {

std::vector<TileShape> factor_pairs(int32_t n) {
  std::vector<TileShape> pairs;
  for (int32_t a = 1; a <= n; ++a)
    if (n % a == 0) pairs.push_back({a, n / a});
  return pairs;
}

std::span<const GeneratorInfo> list_generators() {
  static const std::array<GeneratorInfo, 8> generators = {{
      {"ring", "Ring-Attention: KV chunks circulate and Q stays (--variant pass-kv, default), or Q circulates and "
               "KV stays (pass-q); double-buffered, partials travel one step behind; contiguous, zigzag or striped"},
      {"all-gather", "Llama-3 context parallelism: all-gather K/V, compute the local rows; reduce-scatter dK/dV"},
      {"ulysses", "DeepSpeed-Ulysses: all-to-all from sequence to head split; needs P to divide the heads"},
      {"usp", "Unified sequence parallelism: Ulysses degree u inside, ring degree r across (--tile UxR)"},
      {"attention2d", "ATTENTION2D: rows x cols grid of coarse blocks; --variant collective (default) or ring"},
      {"mesh", "Mesh-Attention: a x b tiles, Q-rings of a and KV-rings of b, greedy overlap (--tile AxB)"},
      {"assignment", "A custom assignment matrix from a JSON file (--input FILE): direct P2P fetches"},
      {"file", "A complete schedule read from a JSON file (--input FILE)"},
  }};
  return generators;
}

Layout default_layout(const Problem& problem) {
  return problem.mask.kind == MaskKind::full ? Layout::contiguous : Layout::zigzag;
}

void require_tokens_per_gpu(const Problem& problem, int32_t gpus) {
  if (problem.seq_len < gpus)
    throw UserError("--seq " + std::to_string(problem.seq_len) + " is smaller than --gpus " + std::to_string(gpus) +
                    ": every GPU needs at least one token");
}

namespace {
// generate_schedule, handing back the block grid the generator used (null for a file), which
// generate_checked passes on to check() instead of making the same grid twice.
void require_generatable(const Problem& problem, const GeneratorOptions& options) {
  problem.validate();
  if (options.gpus < 1) throw UserError("--gpus must be at least 1, got " + std::to_string(options.gpus));
  require_tokens_per_gpu(problem, options.gpus);
}

// Checked before the grid (8 bytes per block) or any op is allocated.
std::shared_ptr<const BlockGrid> make_grid(const std::string& algorithm, const Problem& problem,
                                           const GeneratorOptions& options) {
  require_schedule_memory(algorithm, problem, options);
  return shared_grid(problem, options.layout.value_or(default_layout(problem)), options.gpus);
}

Schedule generate_on_grid(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                          std::shared_ptr<const BlockGrid>& grid_used) {
  require_generatable(problem, options);
  if (algorithm == "file") {
    if (options.input_path.empty()) throw UserError("algorithm 'file' needs --input FILE (a schedule JSON)");
    return read_schedule_file(options.input_path);
  }
  grid_used = make_grid(algorithm, problem, options);
  const BlockGrid& grid = *grid_used;
  if (algorithm == "ring") return generate_ring(problem, options, grid);
  if (algorithm == "all-gather") return generate_all_gather(problem, options, grid);
  if (algorithm == "ulysses") return generate_ulysses(problem, options, grid);
  if (algorithm == "usp") return generate_usp(problem, options, grid);
  if (algorithm == "attention2d") return generate_attention2d(problem, options, grid);
  if (algorithm == "mesh") return generate_mesh(problem, options, grid);
  if (algorithm == "assignment") return generate_from_assignment(problem, options, grid);
  std::string known;
  for (const auto& info : list_generators()) known += (known.empty() ? "" : ", ") + info.name;
  throw UserError("--algo: unknown algorithm " + tessera::quoted(algorithm) + " (expected one of " + known + ")");
}
}  // namespace

bool generator_reads_batch(const std::string& algorithm) {
  return algorithm != "ring" && algorithm != "all-gather" && algorithm != "ulysses" && algorithm != "usp" &&
         algorithm != "attention2d";
}

Schedule generate_schedule(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  std::shared_ptr<const BlockGrid> grid;
  return generate_on_grid(algorithm, problem, options, grid);
}

CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  return generate_checked(algorithm, problem, options, GeneratedGate{});
}

CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                                 const GeneratedGate& gate) {
  auto generated = [&](const GeneratorOptions& given) {
    GeneratedSchedule schedule = generate_unchecked(algorithm, problem, given);
    if (gate && schedule.grid) gate(schedule.schedule, *schedule.grid);
    return schedule;
  };
  // Held at a larger period than its own (a ring under leaves of 256 GPUs): the copies of the
  // schedule held at its own, which is generated and checked alone (period_copies.hpp). Where
  // copies cannot be made so, it is generated at the period asked, as are the other generators.
  const bool copies_own_period = algorithm == "ring" || algorithm == "mesh" ||
                                 (algorithm == "attention2d" && attention2d_is_one_ring(options));
  if (copies_own_period && options.by_rotation && options.rotation_period > 0) {
    GeneratorOptions own = options;
    own.rotation_period = 0;
    CheckedSchedule at_own = check_generated(generated(own), algorithm, own);
    const Schedule& held = at_own.schedule();
    if (held.form == ProgramForm::rotation) {
      held_period(held.period, options.rotation_period, options.gpus);  // a UserError where the period asked does not hold
      if (held.period == options.rotation_period) return at_own;
      // As much memory as the generator held at that period would take, refused alike.
      require_schedule_memory(algorithm, problem, options);
      if (std::optional<CheckedSchedule> copies = held_at_period(at_own, options.rotation_period)) return std::move(*copies);
    }
  }
  return check_generated(generated(options), algorithm, options);
}

GeneratedSchedule generate_unchecked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  GeneratedSchedule generated;
  generated.schedule = generate_on_grid(algorithm, problem, options, generated.grid);
  return generated;
}

PlannedMesh plan_mesh_unemitted(const Problem& problem, const GeneratorOptions& options) {
  require_generatable(problem, options);
  PlannedMesh planned;
  planned.grid = make_grid("mesh", problem, options);
  planned.program = plan_mesh_program(problem, options, *planned.grid);
  return planned;
}

GeneratedSchedule emit_planned_mesh(PlannedMesh planned, const Problem& problem, const GeneratorOptions& options) {
  GeneratedSchedule generated;
  generated.schedule = emit_mesh_program(planned.program, problem, *planned.grid, options.gpus, options.by_rotation,
                                         options.rotation_period);
  generated.grid = std::move(planned.grid);
  return generated;
}

CheckedSchedule check_generated(GeneratedSchedule generated, const std::string& algorithm, const GeneratorOptions& options) {
  const std::string name = generated.schedule.name();
  try {
    return check(std::move(generated.schedule), std::move(generated.grid));
  } catch (const InvalidSchedule& invalid) {
    if (algorithm == "file") throw UserError(options.input_path + ": invalid schedule: " + invalid.what());
    throw std::runtime_error("schedule '" + name + "' is invalid: " + invalid.what());
  }
}

}  // namespace tessera::schedules
