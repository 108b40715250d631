#pragma once
// A floor under the time cost_schedule will print for a schedule, read off its ops before the
// schedule is checked: what a plan needs to set a candidate aside that cannot beat the best
// one already costed, without its check (scenario/plan.hpp).
//
// Why it holds: every op starts after the op before it on its stream (analysis.hpp), so a
// stream finishes no earlier than the sum of its ops' durations; and a GPU's link out (in)
// carries one message's bytes at a time, so a GPU finishes no earlier than the wire time of
// everything it sends (receives). The durations are the model's own: a compute or merge op
// as compute_op_seconds prices it; on the uniform network also a send's and a recv's transfer
// (latency, bytes over bandwidth and the per-message cost) and a collective's length as
// cost_schedule works it out. On a topology only compute and merges count (the routes and the
// placement are not known before the check).
#include <string>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/cost.hpp"

namespace tessera::costmodel {

struct TimeFloor {
  double seconds = 0;  // the longest of the sums below
  int32_t gpu = -1;    // whose stream or link gives it (-1: none, the floor is 0)
  enum class Source { stream, link_out, link_in } source = Source::stream;
  int32_t stream = -1;  // with Source::stream: which of the GPU's streams

  // "stream 1 of GPU 0", "the link out of GPU 3", "the links into GPU 3"; "" without a GPU.
  std::string describe() const;
};

TimeFloor analytic_time_floor(const Schedule& schedule, const BlockGrid& grid, const Hardware& hardware,
                              bool uniform_network);

}  // namespace tessera::costmodel
