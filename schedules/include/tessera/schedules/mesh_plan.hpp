#pragma once
// The greedy plan of Mesh-Attention for one a x b tile, in coordinates relative to the GPU:
// relative row s is the query chunk s hops back along the Q-ring (s = 0: the GPU's own),
// relative column t the key/value chunk t hops back along the KV-ring. Every GPU runs the
// same relative plan (SPMD), so its ring transfers pair up with its neighbours'.
//
// The principles (research/papers.md A.4), as reconstructed here:
//  1. Unlock first: the next transfer is the one that unlocks the most blocks per second of
//     transfer (a new Q row unlocks one block per KV column present, and vice versa).
//  2. Just enough compute: while a transfer is in flight, compute only as many ready blocks
//     as it takes to hide it; keep the rest for later gaps.
//  3. Local output last: blocks of the GPU's own rows (forward) produce output that never
//     leaves, so they wait; among the others, rows (backward: alternately rows and columns)
//     closest to completion go first, so their partials can leave early.
#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::schedules {

struct MeshCosts {
  double q_step_s = 1;    // one hop of the Q-ring (backward: Q, dO and Stats)
  double kv_step_s = 1;   // one hop of the KV-ring
  double block_s = 1;     // one block of computation
};

struct MeshPhase {
  enum class Step { none, q, kv };
  Step step = Step::none;  // the ring hop issued at the start of this phase (none: the tail)
  struct Item {
    int32_t row = 0;       // relative row
    int32_t column = 0;    // relative column
    bool completes_row = false;     // after this block, the row's partial may leave (row != 0)
    bool completes_column = false;  // backward: the column's dK/dV partial may leave (column != 0)
    friend bool operator==(const Item&, const Item&) = default;
  };
  std::vector<Item> blocks;  // computed, in order, while the hop is in flight
  friend bool operator==(const MeshPhase&, const MeshPhase&) = default;
};

// The order policy. `greedy` is the plan above. The two simple orders it is compared with:
//  - receives_first: every ring hop first (Q and KV alternating), all compute afterwards;
//  - ring_order: the Q-ring hops first, then the KV-ring hops in ring order, computing every
//    block as soon as it is unlocked, row by row, with no priority for partials that leave.
// `explicit_order` takes the hops in an order given by the caller ('q' a Q-ring hop, 'k' a
// KV-ring hop: a - 1 of the one, b - 1 of the other, interleaved at will) and computes under
// each hop by the greedy's own rules 2 and 3. The greedy's hop order given explicitly is
// therefore the greedy plan itself, phase for phase: a search over every order (variant
// "optimal", scenario/mesh_search.hpp) contains the greedy plan.
enum class MeshOrder { greedy, receives_first, ring_order, explicit_order };
MeshOrder parse_mesh_order(const std::string& text);  // UserError
std::string to_string(MeshOrder order);

// backward = true alternates rows and columns and releases column partials too. `hops` is
// read for MeshOrder::explicit_order only (std::invalid_argument unless it holds a - 1 'q'
// and b - 1 'k').
std::vector<MeshPhase> plan_mesh_tile(int32_t a, int32_t b, const MeshCosts& costs, bool backward,
                                      MeshOrder order = MeshOrder::greedy, const std::string& hops = {});

// The hops of a plan in order, as plan_mesh_tile's `hops` reads them ("qkqk...").
std::string mesh_hop_order(const std::vector<MeshPhase>& phases);

// Every hop order of an a x b tile, in lexicographic order ('k' before 'q'): the interleavings
// of a - 1 Q-ring hops with b - 1 KV-ring hops, C(a + b - 2, a - 1) of them.
std::vector<std::string> mesh_hop_orders(int32_t a, int32_t b);
int64_t mesh_hop_order_count(int32_t a, int32_t b);  // C(a + b - 2, a - 1)

// The tiles whose hop orders variant "optimal" searches exhaustively: a, b <= 4, and 2 x 8 and
// 8 x 2 (at most 20 orders per pass). The limit in words, for refusals.
bool mesh_order_searchable(TileShape tile);
inline constexpr const char* kMeshSearchLimit = "a, b <= 4, or 2x8 or 8x2";

// What the plan weighs for a problem on the hardware its tile runs on (mesh.cpp): a hop of
// each ring (fixed cost plus bytes over the ring's narrowest link) and a block at its
// mask-exact mean work.
MeshCosts mesh_plan_costs(const Problem& problem, const BlockGrid& grid, bool backward, const PlanHardware& hardware);

// Mesh's generator in its two halves. Its plan (the tile, each pass's hops and the blocks under
// each, the buffers) is all its ops depend on besides the problem's shape, and the planner is
// the only part of any generator but the assignment's that reads the batch (it weighs a hop's
// bytes and a block's FLOPs, which the batch scales, against a latency, which it does not). So
// problems that differ only in the batch and plan alike get the same ops: the schedule cache
// compares plans, and emits and checks a Mesh only for a plan it does not hold yet
// (scenario/schedule_cache.hpp).
struct MeshProgram {
  TileShape tile;
  std::string variant;  // the schedule's variant: tile, layout, order
  std::vector<std::pair<Pass, std::vector<MeshPhase>>> plans;
  int32_t q_buffers = 0, kv_buffers = 0;  // per ring stream (0: unbounded)
  friend bool operator==(const MeshProgram&, const MeshProgram&) = default;
};
MeshProgram plan_mesh_program(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid);
// The period of a Mesh held by rotation (ProgramForm::rotation): a, one row of its GPU grid,
// or 1 for a single row (b = 1).
int32_t mesh_rotation_period(const TileShape& tile);
// With by_rotation, the programs of one period of GPUs alone where the grid allows it
// (ProgramForm::rotation, generators.hpp's GeneratorOptions::by_rotation): a row of a tiles, or
// `rotation_period` GPUs where asked (GeneratorOptions::rotation_period).
Schedule emit_mesh_program(const MeshProgram& program, const Problem& problem, const BlockGrid& grid, int32_t gpus,
                           bool by_rotation = false, int32_t rotation_period = 0);

// generate_unchecked("mesh", ...) stopped before the ops: the validated problem's grid and plan.
struct PlannedMesh {
  std::shared_ptr<const BlockGrid> grid;
  MeshProgram program;
};
PlannedMesh plan_mesh_unemitted(const Problem& problem, const GeneratorOptions& options);
// The rest of generate_unchecked("mesh", ...): the same schedule and grid.
GeneratedSchedule emit_planned_mesh(PlannedMesh planned, const Problem& problem, const GeneratorOptions& options);

}  // namespace tessera::schedules
