// Closed-form memory estimates of schedules. The figures per unit come from peak resident set
// sizes (/usr/bin/time -v) of `tessera cost` and `tessera simulate` on 64 to 256 GPUs, 1M
// tokens, passes forward and backward, RelWithDebInfo build, rounded up:
//  - ring (either side), assignment: ~9 ops per block row and step, 1.4 kB per P^2 for both
//    passes (cost, 256 GPUs: 92 MB; simulate adds ~25 %): 1000 B per P^2 and pass;
//  - all-gather: P^2 collective transfers and blocks per pass, 420 B per P^2 for both: 250 B;
//  - ulysses and usp: every head group computes every block, u * P^2 blocks per pass at 34 B
//    per block for both passes (ulysses 256 GPUs: 568 MB; usp 32x8: 120 MB): 30 B per block and
//    pass, plus the ring part of usp (u rings of r members: u * r^2 ring steps) at the ring's
//    figure;
//  - attention2d: 170 B per P^2 for both passes (16x16): 120 B per P^2 and pass;
//  - mesh: 400 B per P^2 for both passes (its chosen tile): 250 B per P^2 and pass;
//  - mesh and attention2d on a long tile (1x256, 256x1: 55 to 132 MB on 256 GPUs) run rings as
//    long as its longer side: the ring's figure times that side over P on top.
// Every schedule also holds the block grid's cache of pairs per block, 8 B per P^2.
#include "tessera/schedules/resource_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/schedules/mesh_plan.hpp"
#include "tessera/core/resource_limits.hpp"

namespace tessera::schedules {

namespace {

constexpr double kGridBytesPerBlock = 8;
constexpr double kRingBytesPerBlockPass = 1000;
constexpr double kAllGatherBytesPerBlockPass = 250;
constexpr double kHeadSplitBytesPerBlockPass = 30;
constexpr double kAttention2dBytesPerBlockPass = 120;
constexpr double kMeshBytesPerBlockPass = 250;
// A schedule already built: per op, block, item and transfer, its analysis (dependencies,
// partners, buffers) and the simulator's per-op state (ring, 256 GPUs: 1.2M elements, 92 MB
// in all with the schedule itself).
constexpr double kCheckBytesPerElement = 80;

}  // namespace

double estimate_schedule_bytes(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  const double gpus = options.gpus;
  const double blocks = gpus * gpus;
  const double passes = (problem.has_forward() ? 1 : 0) + (problem.has_backward() ? 1 : 0);
  double per_pass = 0;
  // The GPUs held where a larger period than the schedule's own is asked for.
  const double asked_period = options.rotation_period;
  if (algorithm == "ring" && options.by_rotation) {
    // GPU 0's program alone (generators.hpp's by_rotation), or the period's asked for; the
    // generator estimates again, in full, before emitting every GPU's program where the grid
    // does not allow it.
    per_pass = kRingBytesPerBlockPass * gpus * std::max(1.0, asked_period);
  } else if (algorithm == "ring" || algorithm == "assignment") {
    per_pass = kRingBytesPerBlockPass * blocks;
  } else if (algorithm == "all-gather") {
    per_pass = kAllGatherBytesPerBlockPass * blocks;
  } else if (algorithm == "ulysses") {
    per_pass = kHeadSplitBytesPerBlockPass * gpus * blocks;
  } else if (algorithm == "usp") {
    const double u = std::max(1, usp_ulysses_degree(problem, options));
    const double r = gpus / u;
    per_pass = kHeadSplitBytesPerBlockPass * u * blocks + kRingBytesPerBlockPass * u * r * r;
    // Group 0's programs alone (usp.cpp), u / P of the whole; the generator estimates again, in
    // full, before emitting every GPU's program where the grid does not allow it.
    if (options.by_rotation && u < gpus && (asked_period == 0 || asked_period == u)) per_pass *= u / gpus;
  } else if (algorithm == "attention2d" || algorithm == "mesh") {
    // Without a tile the generator picks a near-square one.
    const double longer_side =
        options.tile ? std::max(options.tile->first, options.tile->second) : std::sqrt(gpus);
    per_pass = (algorithm == "mesh" ? kMeshBytesPerBlockPass : kAttention2dBytesPerBlockPass) * blocks +
               kRingBytesPerBlockPass * blocks * longer_side / gpus;
    if (algorithm == "mesh" && options.by_rotation) {
      // One row of a tiles' programs (mesh_plan.hpp's emit_mesh_program; one GPU's for 1 x P and
      // P x 1), a / P of the whole; emit_mesh_program estimates again, in full, before emitting
      // every GPU's program where the grid does not allow it.
      const double period = options.tile ? mesh_rotation_period(*options.tile) : std::sqrt(gpus);
      per_pass *= std::max({1.0, period, asked_period}) / gpus;
    }
    // One ring of all P GPUs: GPU 0's program alone (attention2d.cpp), which estimates again,
    // in full, where the grid does not allow it.
    if (algorithm == "attention2d" && options.by_rotation && attention2d_is_one_ring(options))
      per_pass *= std::max(1.0, asked_period) / gpus;
  }
  return kGridBytesPerBlock * blocks + passes * per_pass;
}

double estimate_check_bytes(const Schedule& schedule) {
  const double gpus = schedule.gpus;
  double transfers = 0;
  for (const Collective& collective : schedule.collectives) transfers += static_cast<double>(collective.transfers.size());
  const double elements = static_cast<double>(schedule.ops.size() + schedule.blocks.size() + schedule.items.size()) + transfers;
  return kGridBytesPerBlock * gpus * gpus + kCheckBytesPerElement * elements;
}

void require_schedule_memory(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                             int concurrent) {
  const double bytes = estimate_schedule_bytes(algorithm, problem, options) * std::max(1, concurrent);
  std::string what = algorithm;
  if (options.tile) what += " " + to_string(*options.tile);
  what += " on " + std::to_string(options.gpus) + " GPUs";
  if (concurrent > 1) what += " (" + std::to_string(concurrent) + " evaluated at once)";
  require_memory(bytes, what);
}

}  // namespace tessera::schedules
