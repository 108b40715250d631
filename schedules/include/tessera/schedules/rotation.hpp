#pragma once
// Schedules held by rotation (ProgramForm::rotation in core/schedule.hpp): the programs of GPUs
// 0 .. period - 1 alone, GPU g running GPU (g mod period)'s with every GPU index and chunk
// shifted by g - g mod period. This is exact only where every GPU's work is its base GPU's
// shifted: chunk c holds as many tokens as chunk c + period, and block (i, j) has the pairs of
// (i + period, j + period) (a full mask, or a causal one cut zigzag, whose off-diagonal blocks
// are all half full). A ring on such a grid is such a schedule with period 1, a Mesh of a x b
// tiles with period a (mesh_rotation_period, mesh_plan.hpp), USP u x r with period u (usp.cpp).
#include <cstdint>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"

namespace tessera::schedules {

// Whether shifting both chunks of every block by `period` keeps its pairs, and every chunk has
// the tokens of the chunk `period` before it: P² pair counts, read from the grid's table.
bool grid_is_rotation_invariant(const BlockGrid& grid, int32_t period = 1);

// Whether the grid of `gpus` chunks is such a grid for every period, told from the problem
// alone, without its P² pairs: a full mask on chunks of equal tokens, or a causal one cut zigzag
// into 2P pieces of equal tokens. True only where grid_is_rotation_invariant is; some grids it
// accepts are not named here. For what only an estimate hangs on (a plan's memory, before any
// grid is built); the generators decide on the grid.
bool rotation_expected(const Problem& problem, Layout layout, int32_t gpus);

// The chunk (or GPU) `index` shifted by `shift`, modulo `gpus`.
inline int32_t rotate(int32_t index, int64_t shift, int32_t gpus) {
  const int64_t value = (static_cast<int64_t>(index) + shift) % gpus;
  return static_cast<int32_t>(value < 0 ? value + gpus : value);
}
inline DataItem rotate(const DataItem& item, int64_t shift, int32_t gpus) {
  return DataItem{item.kind, item.head_group, rotate(item.chunk, shift, gpus)};
}

// The period a generator holds: the schedule's own (`own`), or, where the network looks the same
// only under larger shifts (a ring under leaves of 256 GPUs: sim/symmetric_period.hpp), the one
// asked for (GeneratorOptions::rotation_period; 0 asks for none), which must be a multiple of
// `own` that divides the GPUs (UserError otherwise).
int32_t held_period(int32_t own, int32_t asked, int32_t gpus);

// GPU g runs the program of GPU base_gpu(g), shifted by g - base_gpu(g).
inline int32_t base_gpu(int32_t gpu, int32_t period) { return gpu % period; }

}  // namespace tessera::schedules
