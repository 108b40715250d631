#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

bool grid_is_rotation_invariant(const BlockGrid& grid) {
  const int64_t chunks = grid.chunks();
  for (int64_t chunk = 1; chunk < chunks; ++chunk)
    if (grid.chunk_tokens(chunk) != grid.chunk_tokens(0)) return false;
  // Block (i, j) against (0, j - i): the same pairs for every i makes every shift keep them.
  for (int64_t q = 1; q < chunks; ++q)
    for (int64_t kv = 0; kv < chunks; ++kv)
      if (grid.pairs(q, kv) != grid.pairs(0, rotate(static_cast<int32_t>(kv - q), 0, static_cast<int32_t>(chunks))))
        return false;
  return true;
}

}  // namespace tessera::schedules
