#include "tessera/schedules/rotation.hpp"

#include <string>

#include "tessera/core/error.hpp"

namespace tessera::schedules {

bool grid_is_rotation_invariant(const BlockGrid& grid, int32_t period) {
  const int64_t chunks = grid.chunks();
  if (period < 1 || chunks % period != 0) return false;
  for (int64_t chunk = period; chunk < chunks; ++chunk)
    if (grid.chunk_tokens(chunk) != grid.chunk_tokens(chunk % period)) return false;
  // Block (i, j) against its first shift (i mod period, j - (i - i mod period)): the same pairs
  // for every i makes every shift by a multiple of the period keep them.
  for (int64_t q = period; q < chunks; ++q) {
    const int64_t shift = q - q % period;
    for (int64_t kv = 0; kv < chunks; ++kv)
      if (grid.pairs(q, kv) != grid.pairs(q % period, rotate(static_cast<int32_t>(kv), -shift, static_cast<int32_t>(chunks))))
        return false;
  }
  return true;
}

int32_t held_period(int32_t own, int32_t asked, int32_t gpus) {
  if (asked == 0) return own;
  if (asked < own || asked % own != 0 || gpus % asked != 0)
    throw UserError("a rotation period of " + std::to_string(asked) + " GPUs: expected a multiple of the schedule's own (" +
                    std::to_string(own) + ") that divides the " + std::to_string(gpus) + " GPUs");
  return asked;
}

bool rotation_expected(const Problem& problem, Layout layout, int32_t gpus) {
  if (gpus < 1) return false;
  // Contiguous and striped chunks are equal when P divides N; zigzag's 2P pieces when 2P does.
  const int64_t pieces = layout == Layout::zigzag ? 2 * int64_t{gpus} : gpus;
  const bool equal_chunks = problem.seq_len % pieces == 0;
  if (problem.mask.kind == MaskKind::full) return equal_chunks;
  // Zigzag: every off-diagonal block is half full and every diagonal one alike.
  return problem.mask.kind == MaskKind::causal && layout == Layout::zigzag && equal_chunks;
}

}  // namespace tessera::schedules
