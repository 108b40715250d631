#include "critical_path.hpp"

#include <algorithm>

namespace tessera::sim {

std::vector<uint32_t> critical_path(const Schedule& schedule, const schedules::ScheduleAnalysis& analysis,
                                    std::span<const double> op_finish_s) {
  std::vector<uint32_t> path;
  const size_t op_count = schedule.ops.size();
  if (op_count == 0) return path;
  uint32_t at = 0;
  for (uint32_t index = 0; index < op_count; ++index)
    if (op_finish_s[index] > op_finish_s[at]) at = index;
  std::vector<uint8_t> seen(op_count, 0);
  while (true) {
    path.push_back(at);
    seen[at] = 1;
    uint32_t best = UINT32_MAX;
    double latest = -1;
    auto consider = [&](uint32_t candidate) {
      for (uint32_t dep : analysis.deps_of(candidate))
        if (!seen[dep] && op_finish_s[dep] > latest) {
          latest = op_finish_s[dep];
          best = dep;
        }
    };
    consider(at);
    const Op& op = schedule.ops[at];
    if (analysis.partner[at] >= 0) consider(static_cast<uint32_t>(analysis.partner[at]));
    if (op.kind == OpKind::collective)
      for (uint32_t member : analysis.collective_ops[static_cast<size_t>(op.peer)]) consider(member);
    if (best == UINT32_MAX) break;
    at = best;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace tessera::sim
