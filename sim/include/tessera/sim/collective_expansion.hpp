#pragma once
// The algorithms collectives run, expanded into engine tasks (engine.hpp). A schedule's
// collective ops and the standalone collectives of `simulate --collective` both go through
// here, so both run the same ring and the same tree.
//  - ring (NCCL's ring): the members in ring order; at every step each member passes one
//    piece to the next member, once its own previous step is done and the piece of the
//    previous step has come from its predecessor. All-gather forwards every member's piece
//    k - 1 steps round the ring; reduce-scatter passes running sums on, each reaching its owner
//    at the last step; all-reduce is a reduce-scatter then an all-gather, 2(k - 1) steps. The
//    first step starts the operation and pays its overhead; later steps pay only latency.
//    The ring is made step by step as it runs (a TaskSource, engine.hpp): a member's step is
//    made when its own previous step and its predecessor's have arrived, so it holds O(k)
//    tasks rather than its O(k^2);
//  - tree: all-reduce as a pipelined binary tree (the shape of NCCL's tree algorithm, with one
//    tree instead of two): rank i's parent is (i - 1) / 2; chunk c goes up from a rank once it
//    has chunk c from its children (and sent chunk c - 1), and the root's sum of chunk c comes
//    down the same edges, each rank forwarding it once received;
//  - anything else runs direct: every message its own task, all at once (the caller adds
//    them with Engine::add_task).
#include <cstdint>
#include <span>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/sim/engine.hpp"

namespace tessera::sim {

// All-gather, reduce-scatter and all-reduce run as a ring.
bool runs_as_ring(CollectiveKind kind);
int32_t ring_steps(CollectiveKind kind, int32_t members);
// The member (ring position) whose piece the member at `position` passes on at `step`.
int32_t ring_piece_owner(CollectiveKind kind, int32_t members, int32_t step, int32_t position);

// Which ring steps may start as steps arrive: step s + 1 of the member at position p waits for
// step s of p and of p - 1. `steps` per member, `members` positions.
class RingProgress {
 public:
  // The positions whose step + 1 no longer waits, in the order they start.
  struct Released {
    int32_t count = 0;
    int32_t positions[2] = {-1, -1};
  };
  RingProgress(int32_t members, int32_t steps);
  // `step` of `position` arrived (a member's steps arrive in order).
  Released arrived(int32_t step, int32_t position);
  // The steps of `position` that arrived so far: the step it runs now.
  int32_t arrived_steps(int32_t position) const { return arrived_steps_[static_cast<size_t>(position)]; }

 private:
  int32_t k_, steps_;
  std::vector<int32_t> arrived_steps_;  // per position: its steps that arrived
};

// Begins a transfer that runs the ring: `members` are ranks in ring order, `piece_bytes[i]` the
// size of the piece that belongs to members[i] (both copied). Fewer than two members move
// nothing. Start it with Engine::start_transfer().
int32_t begin_ring_transfer(Engine& engine, CollectiveKind kind, std::span<const int32_t> members,
                            std::span<const double> piece_bytes);

// Adds a tree all-reduce of `bytes` per rank over ranks 0 .. ranks - 1, cut into `chunks`.
void expand_tree_all_reduce(Engine& engine, int32_t transfer, int32_t ranks, double bytes, int32_t chunks);

}  // namespace tessera::sim
