#pragma once
// The program shared by Ulysses and USP: u head groups inside groups of u consecutive GPUs
// (all-to-all turns "my tokens, all heads" into "the group's tokens, my heads"), and a KV ring
// of degree r across groups. Ulysses is r = 1; r = P with u = 1 is a ring.
#include "tessera/schedules/generators.hpp"

namespace tessera::schedules {

// The ring receives take `buffers` remote-chunk buffers each (0 = unbounded). With
// `first_group_only`, the programs of group 0's u GPUs alone, and group 0's collectives: the
// programs held of a schedule held by rotation with period u (schedules/rotation.hpp), whose
// caller sets the form. Group g runs group 0's program shifted by g u GPUs and chunks.
void emit_head_split_ring(ScheduleBuilder& builder, const BlockGrid& grid, int32_t u, int32_t r, int32_t buffers,
                          bool first_group_only = false);

}  // namespace tessera::schedules
