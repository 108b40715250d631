#pragma once
// Evaluating one point: generate and check its schedule, cost it with the analytical model
// (on the routed topology when one is given) and, at fidelity alpha-beta or flow, simulate it.
// The result is one row of text cells, one per column of result_columns(). A point whose
// schedule does not apply (Ulysses where the GPUs do not divide the heads, a tile that does
// not divide) gets status "skipped: reason"; any other failure "error: message". Nothing a
// point does stops the sweep.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/sweep/points.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/scenario/schedule_cache.hpp"

namespace tessera::sweep {

struct Column {
  std::string name;  // units in the name: _s, _bytes, _tokens, _gbps, _us ...
  bool numeric = false;
};

// index, every field (its text as in the spec), seq_tokens, then the metrics.
const std::vector<Column>& result_columns();
size_t column_index(const std::string& name);  // UserError listing the columns when unknown
size_t status_column();

using Row = std::vector<std::string>;

// Thread-safe: the topologies it builds are cached and shared read-only, and so are the checked
// schedules (scenario/schedule_cache.hpp), up to `schedule_cache_bytes` (0: none held): points
// that differ only in network or hardware fields reuse one schedule.
class Evaluator {
 public:
  explicit Evaluator(size_t schedule_cache_bytes = scenario::ScheduleCache::kDefaultBytes)
      : schedules_(schedule_cache_bytes) {}
  Row evaluate(size_t index, const PointValues& values);
  // evaluate(), and should anything escape it (an allocation that fails), the point's row with
  // status "error: ...": a point never stops the sweep, and no exception leaves a worker.
  Row evaluate_safely(size_t index, const PointValues& values) noexcept;
  scenario::ScheduleCache::Stats schedule_cache_stats() const { return schedules_.stats(); }

 private:
  std::shared_ptr<const topo::Topology> topology(const std::string& name, int32_t gpus);
  std::mutex mutex_;
  std::map<std::pair<std::string, int32_t>, std::shared_ptr<const topo::Topology>> topologies_;
  scenario::ScheduleCache schedules_;
};

// Shortest text that reads back as the same double ("0.1", "1e+21", "12").
std::string format_number(double value);

}  // namespace tessera::sweep
