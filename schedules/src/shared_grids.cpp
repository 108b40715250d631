#include "shared_grids.hpp"

#include <mutex>
#include <vector>

namespace tessera::schedules {

std::shared_ptr<const BlockGrid> shared_grid(const Problem& problem, Layout layout, int64_t chunks) {
  // The few grids made last: a plan asks for one or two (its layouts), and a sweep's schedule
  // cache keeps thousands alive, which a search of every live grid per generation would visit.
  constexpr size_t kRemembered = 8;
  static std::mutex mutex;
  static std::vector<std::weak_ptr<const BlockGrid>> recent;  // oldest first
  // One lock over finding and counting: a second thread asking for the grid being counted waits
  // for it rather than counting its own.
  const std::lock_guard<std::mutex> lock(mutex);
  for (const auto& held : recent)
    if (auto grid = held.lock(); grid != nullptr && grid->is_grid_of(problem, layout, chunks)) return grid;
  auto grid = std::make_shared<const BlockGrid>(problem, layout, chunks);
  grid->total_pairs();
  if (recent.size() == kRemembered) recent.erase(recent.begin());
  recent.push_back(grid);
  return grid;
}

}  // namespace tessera::schedules
