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
  };
  std::vector<Item> blocks;  // computed, in order, while the hop is in flight
};

// The order policy. `greedy` is the plan above. The two simple orders it is compared with:
//  - receives_first: every ring hop first (Q and KV alternating), all compute afterwards;
//  - ring_order: the Q-ring hops first, then the KV-ring hops in ring order, computing every
//    block as soon as it is unlocked, row by row, with no priority for partials that leave.
enum class MeshOrder { greedy, receives_first, ring_order };
MeshOrder parse_mesh_order(const std::string& text);  // UserError
std::string to_string(MeshOrder order);

// backward = true alternates rows and columns and releases column partials too.
std::vector<MeshPhase> plan_mesh_tile(int32_t a, int32_t b, const MeshCosts& costs, bool backward,
                                      MeshOrder order = MeshOrder::greedy);

// What the plan weighs for a problem on the hardware its tile runs on (mesh.cpp): a hop of
// each ring (fixed cost plus bytes over the ring's narrowest link) and a block at its
// mask-exact mean work.
MeshCosts mesh_plan_costs(const Problem& problem, const BlockGrid& grid, bool backward, const PlanHardware& hardware);

}  // namespace tessera::schedules
