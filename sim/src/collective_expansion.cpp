#include "tessera/sim/collective_expansion.hpp"

#include <vector>

namespace tessera::sim {

bool runs_as_ring(CollectiveKind kind) {
  return kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter ||
         kind == CollectiveKind::all_reduce;
}

int32_t ring_steps(CollectiveKind kind, int32_t members) {
  return kind == CollectiveKind::all_reduce ? 2 * (members - 1) : members - 1;
}

int32_t ring_piece_owner(CollectiveKind kind, int32_t members, int32_t step, int32_t position) {
  const int32_t k = members;
  // How many members back the piece's owner sits, 0 .. k - 1. All-reduce: its reduce-scatter
  // leaves each member its own reduced piece, which its all-gather then forwards. All-gather:
  // forward the piece that started at position - step. Reduce-scatter: pass on the running sum
  // destined for position - step - 1, which arrives there at the last step. (A comparison, not
  // a remainder: this runs for every task of every ring.)
  int32_t back = step + 1;
  if (kind == CollectiveKind::all_reduce && step >= k - 1)
    back = step - (k - 1);
  else if (kind == CollectiveKind::all_gather)
    back = step;
  const int32_t owner = position - back;
  return owner < 0 ? owner + k : owner;
}

RingProgress::RingProgress(int32_t members, int32_t steps)
    : k_(members), steps_(steps), arrived_steps_(static_cast<size_t>(members > 0 ? members : 0), 0) {}

// A member's steps arrive in order (each waits for the one before), so one count per member
// says which of its steps have arrived. (step, position) releases its member's next step first,
// then its successor's (the order in which the ring listed a task's waiters when it was
// expanded whole), each once the other step it waits for has arrived too.
RingProgress::Released RingProgress::arrived(int32_t step, int32_t position) {
  Released released;
  arrived_steps_[static_cast<size_t>(position)] = step + 1;
  if (step + 1 >= steps_) return released;
  const int32_t predecessor = position == 0 ? k_ - 1 : position - 1;
  const int32_t successor = position + 1 == k_ ? 0 : position + 1;
  if (arrived_steps_[static_cast<size_t>(predecessor)] > step) released.positions[released.count++] = position;
  if (arrived_steps_[static_cast<size_t>(successor)] > step) released.positions[released.count++] = successor;
  return released;
}

namespace {
// The ring's tasks, made step by step: task (step, position) sends the piece of that step from
// members[position] to the next member. A member runs one step at a time, so a task's tag is
// its position, and its step the count of that position's steps that arrived.
class RingSource final : public TaskSource {
 public:
  RingSource(CollectiveKind kind, std::span<const int32_t> members, std::span<const double> piece_bytes)
      : kind_(kind),
        k_(static_cast<int32_t>(members.size())),
        steps_(k_ < 2 ? 0 : ring_steps(kind, k_)),
        members_(members.begin(), members.end()),
        piece_bytes_(piece_bytes.begin(), piece_bytes.end()),
        progress_(k_, steps_) {}

  int64_t task_count() const override { return static_cast<int64_t>(steps_) * k_; }

  void start(Engine& engine, int32_t transfer) override {
    for (int32_t position = 0; position < k_; ++position) start(engine, transfer, 0, position);
  }

  void arrived(Engine& engine, int32_t transfer, uint32_t tag) override {
    const auto position = static_cast<int32_t>(tag);
    const int32_t step = progress_.arrived_steps(position);
    const RingProgress::Released next = progress_.arrived(step, position);
    for (int32_t i = 0; i < next.count; ++i) start(engine, transfer, step + 1, next.positions[i]);
  }

 private:
  void start(Engine& engine, int32_t transfer, int32_t step, int32_t position) {
    const int32_t owner = ring_piece_owner(kind_, k_, step, position);
    const int32_t src = members_[static_cast<size_t>(position)];
    const int32_t dst = members_[static_cast<size_t>(position + 1 == k_ ? 0 : position + 1)];
    engine.start_task(transfer, src, dst, piece_bytes_[static_cast<size_t>(owner)], step == 0,
                      static_cast<uint32_t>(position));
  }

  CollectiveKind kind_;
  int32_t k_, steps_;
  std::vector<int32_t> members_;
  std::vector<double> piece_bytes_;
  RingProgress progress_;
};
}  // namespace

int32_t begin_ring_transfer(Engine& engine, CollectiveKind kind, std::span<const int32_t> members,
                            std::span<const double> piece_bytes) {
  return engine.begin_transfer(std::make_unique<RingSource>(kind, members, piece_bytes));
}

void expand_tree_all_reduce(Engine& engine, int32_t transfer, int32_t ranks, double bytes, int32_t chunks) {
  if (ranks < 2) return;
  const double piece = bytes / chunks;
  const int32_t per_chunk = ranks - 1;  // one edge per rank but the root
  auto parent_of = [](int32_t rank) { return (rank - 1) / 2; };
  auto is_leaf = [&](int32_t rank) { return 2 * rank + 1 >= ranks; };
  // Tasks: every chunk's way up (chunk-major, by rank), then every chunk's way down. The
  // leaves' first chunks wait for nothing: they start the operation and pay its overhead.
  int32_t first = -1;
  for (int32_t chunk = 0; chunk < chunks; ++chunk)
    for (int32_t rank = 1; rank < ranks; ++rank) {
      const int32_t task = engine.add_task(transfer, rank, parent_of(rank), piece, chunk == 0 && is_leaf(rank));
      if (first < 0) first = task;
    }
  for (int32_t chunk = 0; chunk < chunks; ++chunk)
    for (int32_t rank = 1; rank < ranks; ++rank) engine.add_task(transfer, parent_of(rank), rank, piece, false);
  auto up = [&](int32_t chunk, int32_t rank) { return first + chunk * per_chunk + (rank - 1); };
  auto down = [&](int32_t chunk, int32_t rank) { return first + (chunks + chunk) * per_chunk + (rank - 1); };

  // Waits, listed task by task in task order, so each task releases its waiters in task order.
  std::vector<int32_t> waits;
  auto wait_for = [&](int32_t task) {
    for (int32_t before : waits) engine.add_dependency(before, task);
    waits.clear();
  };
  for (int32_t chunk = 0; chunk < chunks; ++chunk)
    for (int32_t rank = 1; rank < ranks; ++rank) {
      for (int32_t child : {2 * rank + 1, 2 * rank + 2})
        if (child < ranks) waits.push_back(up(chunk, child));
      if (chunk > 0) waits.push_back(up(chunk - 1, rank));
      wait_for(up(chunk, rank));
    }
  for (int32_t chunk = 0; chunk < chunks; ++chunk)
    for (int32_t rank = 1; rank < ranks; ++rank) {
      if (parent_of(rank) == 0) {
        for (int32_t child : {1, 2})
          if (child < ranks) waits.push_back(up(chunk, child));  // the root has the sum
      } else {
        waits.push_back(down(chunk, parent_of(rank)));
      }
      if (chunk > 0) waits.push_back(down(chunk - 1, rank));
      wait_for(down(chunk, rank));
    }
}

}  // namespace tessera::sim
