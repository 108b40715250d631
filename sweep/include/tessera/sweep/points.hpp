#pragma once
// The points of a sweep, in a deterministic order: the cartesian product of the axis entries
// (the first entry varies slowest; a zipped entry is one axis), then the expansions of
// `algo: all` (every applicable schedule and tile shape, in `tessera plan`'s order) and
// `tile: all` (every factor pair of gpus, for the schedules that take a tile), then the skip
// rules. A point's index is its position in this order; results are keyed by it.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/scenario/scenario.hpp"
#include "tessera/sweep/spec.hpp"

namespace tessera::sweep {

using PointValues = std::array<std::string, kFieldCount>;

// Points are stored as indices into a pool of distinct strings: a million points fit.
class PointSet {
 public:
  size_t size() const { return points_.size(); }
  const std::string& value(size_t point, Field field) const {
    return pool_[points_[point][static_cast<size_t>(field)]];
  }
  PointValues values(size_t point) const;
  void add(const PointValues& values);

 private:
  std::vector<std::string> pool_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::array<uint32_t, kFieldCount>> points_;
};

// The schedules that take a tile shape (tile: all expands for them only).
bool takes_tile(const std::string& algorithm);

PointSet enumerate_points(const Spec& spec);

// The problem fields of a point, as text (scenario/scenario.hpp parses them).
scenario::ProblemText problem_text(const PointValues& values);

// The product of the axis sizes (before expansions and skip rules).
uint64_t product_size(const Spec& spec);

}  // namespace tessera::sweep
