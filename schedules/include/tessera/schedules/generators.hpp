#pragma once
// Schedule generators: from a problem and a GPU count to a schedule. Each generator lives in
// its own file; this is the registry the front ends use.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/network_model.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/checker.hpp"

namespace tessera::schedules {


// What the Mesh-Attention planner weighs a ring hop against a block with (mesh_plan.hpp,
// principles 1 and 2): the FLOP rate of one block, and per ring the bandwidth of its narrowest
// link and the fixed cost of one hop (link latencies plus per-message costs). The scenario
// layer fills it from the GPU profile (or calibration) and the network the tile runs on
// (scenario/plan_hardware.hpp). Defaults: the default Hardware of cost.hpp, an H100 at 60 %
// of 989 TFLOP/s on 400 Gb/s InfiniBand (50 GB/s; 5 us + NCCL's 8.4 + 14 us per message), the
// figures scenario::uniform_plan_hardware gives for it.
struct PlanHardware {
  static constexpr double kDefaultHopLatencyS =
      kDefaultNetworkLink.latency_s + (MessageCosts::kNcclBaseLatencyS + MessageCosts::kNcclNetworkLatencyS);

  double flops_per_s = kDefaultGpu.analytical_efficiency * kDefaultGpu.peak_flops_per_s_16bit;
  double q_ring_bytes_per_s = kDefaultNetworkLink.bytes_per_s;
  double kv_ring_bytes_per_s = kDefaultNetworkLink.bytes_per_s;
  double q_ring_latency_s = kDefaultHopLatencyS;
  double kv_ring_latency_s = kDefaultHopLatencyS;
};

struct GeneratorOptions {
  int32_t gpus = 8;
  std::optional<Layout> layout;     // default: contiguous for a full mask, zigzag otherwise
  std::optional<TileShape> tile;    // mesh a x b, attention2d rows x cols, usp u x r; default: chosen
  std::string variant;              // attention2d: "collective" (default) or "ring"; ring: "pass-kv" (default) or "pass-q"
  // Remote-chunk buffers per streaming receive stream (a ring's incoming chunks): a receive
  // waits until one is free. 2 is double buffering, as production ring attention runs; 0 means
  // unlimited (idealised run-ahead).
  int32_t buffers = 2;
  std::string input_path;           // algorithm "file": a schedule JSON; "assignment": a matrix JSON
  PlanHardware plan_hardware;       // mesh: the hardware its planner weighs transfers with
  // mesh, variant "optimal": the ring hops of each pass in the order to plan ('q' a Q-ring hop,
  // 'k' a KV-ring hop; mesh_plan.hpp, MeshOrder::explicit_order). scenario::generate searches
  // them (scenario/mesh_search.hpp); the generator refuses "optimal" without them.
  struct MeshHops {
    std::string forward, backward;
  };
  std::optional<MeshHops> mesh_hops;
  // ring, mesh, usp and one-ring attention2d: the programs of the GPUs of one period alone
  // (ProgramForm::rotation, core/schedule.hpp: GPU 0 for a ring, one row of a GPUs for a Mesh of
  // a x b tiles, GPU 0 for P x 1, the first Ulysses group of u GPUs for usp u x r, GPU 0 for
  // attention2d's ring variant on 1 x P or P x 1) where the block grid allows it
  // (schedules/rotation.hpp), else every GPU's. Only for figures the analytical model prices on
  // the uniform network: scenario::generate asks for it where nothing else is wanted.
  bool by_rotation = false;
  // With by_rotation: the GPUs whose programs are held where the network looks the same only
  // under larger shifts than the schedule's own (a ring under leaves of 256 GPUs holds 256:
  // sim/symmetric_period.hpp); a multiple of the own period that divides the GPUs (rotation.hpp's
  // held_period). 0: the own period. usp holds only its own and emits in full for any other.
  int32_t rotation_period = 0;
};

struct GeneratorInfo {
  std::string name;
  std::string summary;
};

std::span<const GeneratorInfo> list_generators();
Layout default_layout(const Problem& problem);

// Whether the algorithm's schedule may depend on problem.batch: Mesh's planner prices tiles by
// bytes and FLOPs, which scale with it, and a file's schedule is whatever the file holds. The
// others never read it (with_batch in checker.hpp relies on this).
bool generator_reads_batch(const std::string& algorithm);

// Every GPU needs at least one token: UserError otherwise, naming the fields in their
// command-line spelling as every front end reports them (every generator checks it; a plan
// checks it once before listing candidates).
void require_tokens_per_gpu(const Problem& problem, int32_t gpus);

// Throws UserError when the algorithm is unknown or does not apply (with the reason).
Schedule generate_schedule(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options);

// generate_schedule, then check(): a schedule the checker rejects is a bug in its generator
// (std::runtime_error naming the schedule) or, for algorithm "file", bad input (UserError
// naming the file). Either way it is reported, never costed or simulated.
CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options);
// Called with a generated schedule and its block grid before the schedule is checked, and free to
// throw to stop there: a plan sets aside a candidate whose time floor is already above the best
// one's (scenario/plan.hpp) without paying for its check. Not called for a file's schedule.
using GeneratedGate = std::function<void(const Schedule& schedule, const BlockGrid& grid)>;
CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                                 const GeneratedGate& gate);

// generate_checked's two halves, for a caller that may hold the check of the same program
// already (scenario/schedule_cache.hpp shares a Mesh plan's check across batch sizes): the
// schedule with the block grid it was generated on (null for a file), then its check, reported
// as generate_checked reports it.
struct GeneratedSchedule {
  Schedule schedule;
  std::shared_ptr<const BlockGrid> grid;
};
GeneratedSchedule generate_unchecked(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options);
CheckedSchedule check_generated(GeneratedSchedule generated, const std::string& algorithm, const GeneratorOptions& options);

// The variants worth ranking for a problem (each tile shape, each Ulysses degree, ...), as
// (algorithm, options) pairs; ones that do not apply are left out.
struct Candidate {
  std::string algorithm;
  GeneratorOptions options;
};
std::vector<Candidate> plan_candidates(const Problem& problem, int32_t gpus, std::optional<Layout> layout,
                                       int32_t buffers = 2);

// Generators, one per file. `grid` is the n x n block grid with n = options.gpus.
Schedule generate_ring(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);
Schedule generate_all_gather(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);
Schedule generate_ulysses(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);
Schedule generate_usp(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);
Schedule generate_attention2d(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);
Schedule generate_mesh(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);  // and mesh_plan.hpp
Schedule generate_from_assignment(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);

// The mesh tile a x b (a * b = gpus) that moves the fewest bytes per GPU for the problem.
TileShape choose_mesh_tile(const Problem& problem, int32_t gpus);

// Divisor pairs (a, b) with a * b = n, a ascending.
std::vector<TileShape> factor_pairs(int32_t n);

// Whether attention2d with these options is one ring of all P GPUs: the ring variant on a grid
// of one row or one column (the default grid included, which is 1 x P for a prime P). Its
// GPUs' programs are then GPU 0's shifted, held by rotation where asked (attention2d.cpp).
bool attention2d_is_one_ring(const GeneratorOptions& options);

// The Ulysses degree u of usp u x r on `gpus` GPUs: the tile's first figure where a tile is
// given, else the largest divisor of P that splits the heads evenly (1 if none). O(P) divisions.
int32_t usp_ulysses_degree(const Problem& problem, const GeneratorOptions& options);

}  // namespace tessera::schedules
