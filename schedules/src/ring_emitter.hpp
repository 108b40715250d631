#pragma once
// One ring pass, as production ring attention runs it (ring-flash-attention, TransformerEngine's
// context parallelism, BurstAttention): every member keeps one side of the attention resident
// and the other side travels around the ring, one hop per step.
//  - pass-KV: queries stay, K/V travel; the backward dK/dV partial of each chunk travels as a
//    transfer of its own, one step behind its K/V.
//  - pass-Q: keys and values stay, queries travel (backward: with dO and the forward's
//    statistics); the partial output (forward: O and LSE; backward: dQ) travels one step
//    behind, and dK/dV never leave their owner.
// A travelling partial starts at the first member after the chunk's owner, collects one
// contribution per member and reaches the owner after P - 1 hops, where the owner's own
// contribution (kept locally, as TransformerEngine does) is merged in. A member whose blocks
// of that chunk are all masked neither starts nor receives a partial that is still empty.
// Step s: the member posts the hop that brings step s+1's chunk, computes with step s's chunk
// while it is in flight, then folds in the partial that arrived and passes it on, which
// overlaps the next step's compute. The receive streams are bounded by the schedule's buffers
// (double buffering by default), so the next chunk can be in flight, but no further ahead.
#include <cstdint>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"

namespace tessera::schedules {

enum class RingSide : uint8_t { pass_kv, pass_q };
RingSide parse_ring_side(const std::string& variant);  // "", "pass-kv" or "pass-q"; UserError otherwise
std::string to_string(RingSide side);

struct RingStreams {
  int32_t compute = 0;
  int32_t travel_send = 0, travel_recv = 0;    // the travelling inputs
  int32_t partial_send = 0, partial_recv = 0;  // the travelling partial
};
// Creates the streams of one side, the receiving ones with `buffers` buffers each.
RingStreams make_ring_streams(ScheduleBuilder& builder, RingSide side, int32_t buffers);

// A ring of members (in ring order); members[i] owns the chunks chunks[i] of head group
// `head_group`. Build it with make_ring_pass, which also works out where each partial starts.
struct RingPass {
  RingSide side = RingSide::pass_kv;
  int32_t head_group = 0;
  std::vector<int32_t> members;
  std::vector<std::vector<int32_t>> chunks;
  // first_contribution[i][x]: the fewest hops from member i at which a member has work with
  // chunk x of member i (1 .. size - 1), or `size` when none does: its partial stays empty.
  std::vector<std::vector<int32_t>> first_contribution;
};
RingPass make_ring_pass(const BlockGrid& grid, RingSide side, int32_t head_group, std::vector<int32_t> members,
                        std::vector<std::vector<int32_t>> chunks);

// Appends member `position`'s program for one pass (the builder's current pass).
void emit_ring_pass(ScheduleBuilder& builder, const BlockGrid& grid, const RingStreams& streams, const RingPass& ring,
                    Pass pass, int32_t position);

}  // namespace tessera::schedules
