#pragma once
// The points of a sweep, in a deterministic order: the cartesian product of the axis entries
// (the first entry varies slowest; a zipped entry is one axis), then the expansions of
// `algo: all` (every applicable schedule and tile shape, in `tessera plan`'s order) and
// `tile: all` (every factor pair of gpus, for the schedules that take a tile), then the skip
// rules. A point's index is its position in this order; results are keyed by it.
#include <array>
#include <cstdint>
#include <span>
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
  // How many distinct combinations of these fields' values the points hold.
  size_t distinct_count(std::span<const Field> fields) const;
  // Whether two points have the same value in each of these fields.
  bool agree(size_t a, size_t b, std::span<const Field> fields) const;

 private:
  std::vector<std::string> pool_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::array<uint32_t, kFieldCount>> points_;
};

// The fields that make a point's schedule: the problem but its batch, algo, tile, variant, layout.
// (The schedule cache serves every batch size from one schedule of each algorithm but Mesh,
// whose plan also weighs the batch and the network's figures; that only splits points that
// agree on these.)
std::span<const Field> schedule_fields();

// The points of `order` cut into runs of consecutive points that share a schedule (agree on
// schedule_fields), each at most `most` points long (at least 1): the positions in `order` where
// each run starts, then order.size(). A sweep hands each run to one worker, so that the worker
// that builds a schedule evaluates its other points, while the next worker builds the next
// schedule instead of waiting for this one.
std::vector<size_t> schedule_runs(const PointSet& points, std::span<const size_t> order, size_t most);

// The schedules that take a tile shape (tile: all expands for them only).
bool takes_tile(const std::string& algorithm);

// UserError (with the estimate and the limit, core/resource_limits.hpp) when the sweep would
// not fit in memory: checked on the product of the axes before enumerating, and while
// `algo: all` and `tile: all` expand.
PointSet enumerate_points(const Spec& spec);

// The problem fields of a point, as text (scenario/scenario.hpp parses them).
scenario::ProblemText problem_text(const PointValues& values);

// The product of the axis sizes (before expansions and skip rules). UserError naming the spec
// when it does not fit in 64 bits: a count never wraps.
uint64_t product_size(const Spec& spec);

// Whether some point has algo: all or tile: all (its count is known only by expanding it).
bool expands(const Spec& spec);

// The number of points. When the spec expands nothing and has at most 16 skip rules it is
// computed, not enumerated (the product of the axes less the skipped points, by
// inclusion-exclusion), so a spec of 1e16 points is counted at once; otherwise the points are
// enumerated, within the memory limit like enumerate_points.
uint64_t count_points(const Spec& spec);

// What a running sweep holds per point, at its largest (when it writes the tables): the point,
// its row read back from the journal and its lines of results.csv and results.jsonl.
inline constexpr double kSweepBytesPerPoint = 8192;

}  // namespace tessera::sweep
