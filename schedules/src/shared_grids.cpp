#include "shared_grids.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace tessera::schedules {

std::shared_ptr<const BlockGrid> shared_grid(const Problem& problem, Layout layout, int64_t chunks) {
  static std::mutex mutex;
  static std::vector<std::weak_ptr<const BlockGrid>> grids;
  // One lock over finding and counting: a second thread asking for the grid being counted waits
  // for it rather than counting its own.
  const std::lock_guard<std::mutex> lock(mutex);
  std::erase_if(grids, [](const std::weak_ptr<const BlockGrid>& grid) { return grid.expired(); });
  for (const auto& held : grids)
    if (auto grid = held.lock(); grid != nullptr && grid->is_grid_of(problem, layout, chunks)) return grid;
  auto grid = std::make_shared<const BlockGrid>(problem, layout, chunks);
  grid->total_pairs();
  grids.push_back(grid);
  return grid;
}

}  // namespace tessera::schedules
