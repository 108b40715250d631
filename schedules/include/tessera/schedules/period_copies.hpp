#pragma once
// A checked schedule held by rotation at its own period, held again at a multiple of it without
// generating or checking it again. On a topology, a schedule's own period (a ring's: 1) holds only
// where the network looks the same from every GPU shifted by it; a ring under leaves of 256 GPUs
// is simulated from the programs of one leaf's GPUs (sim/symmetric_period.hpp). Those programs
// are the held ones' copies, shifted (rotation.hpp), and the checks they would pass are the held
// ones' shifted too: so the copies are made from the checked schedule, and their analysis from
// its analysis. At 1,024 GPUs on `h100-ib:128` this replaces generating and checking 1.5 M ops
// (half of that `simulate`'s time) with copying them.
//
// The result equals what the generator held at `period` and the checker make, op for op and
// field for field (tests/schedules/period_copies_test.cpp holds them against each other).
#include <cstdint>
#include <optional>

#include "tessera/schedules/checker.hpp"

namespace tessera::schedules {

// The schedule held at `period` GPUs, or nullopt where copies cannot be made this way and it must
// be generated at that period: a schedule not held by rotation, one with collectives, a period
// that is not a multiple of its own below the GPU count, or ops not stored pass by pass and GPU by
// GPU within a pass (as every generator stores them).
std::optional<CheckedSchedule> held_at_period(const CheckedSchedule& checked, int32_t period);

}  // namespace tessera::schedules
