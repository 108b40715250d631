#pragma once
// The schedule: the program every GPU runs, as one flat DAG of operations that name the data
// they read and write. Every consumer (checker, cost model, simulator, GUI, executors) reads
// this object; none re-derives a schedule on its own.
//
// Data model. The sequence is cut into `chunks` chunks (one per GPU); the heads may be split
// into `head_groups` groups (Ulysses/USP; 1 otherwise). A data item is (kind, head group,
// chunk). Chunk c's inputs (Q, KV, and for the backward pass dO and Stats) start on GPU c,
// and its outputs (O and LSE forward; dQ and dKV backward) must end there.
//  - Input kinds (Q, KV, dO, Stats) are copied by transfers: present or absent on a GPU.
//  - Accumulator kinds (O, LSE, dQ, dKV) are partial sums: compute adds blocks into a GPU's
//    local accumulator; a transfer *moves* it (the sender's copy is gone) into the receiver's
//    inbox; a merge folds inbox entries into the local accumulator.
//
// Program order. Ops of one GPU appear in `ops` in program order. Each op sits on a stream;
// ops of one stream run one after another, and ops of different streams are ordered only by
// the data they share (dependencies are derived, see costmodel/dependencies.hpp).
// Transfers match by order: the k-th send from GPU s to GPU d pairs with the k-th recv on d
// from s, and they complete together (rendezvous).
#include <compare>
#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/layout.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/core/shared_vector.hpp"

namespace tessera {

enum class DataKind : uint8_t { Q, KV, O, LSE, dO, Stats, dQ, dKV };
inline constexpr int kDataKindCount = 8;
std::string to_string(DataKind kind);
bool parse_data_kind(const std::string& text, DataKind& kind);
// Inline: the analyses ask it for every access of millions of ops.
inline bool is_accumulator(DataKind kind) {
  return kind == DataKind::O || kind == DataKind::LSE || kind == DataKind::dQ || kind == DataKind::dKV;
}

struct DataItem {
  DataKind kind = DataKind::Q;
  int32_t head_group = 0;
  int32_t chunk = 0;
  friend auto operator<=>(const DataItem&, const DataItem&) = default;
  // A dense, unique key for hashing and sorting.
  uint64_t key() const {
    return (static_cast<uint64_t>(kind) << 56) | (static_cast<uint64_t>(static_cast<uint32_t>(head_group)) << 32) |
           static_cast<uint32_t>(chunk);
  }
};
std::string to_string(const DataItem& item);  // "KV[3]" or "KV[h1,3]"

// Block (query chunk i, key/value chunk j) for the heads of one head group.
struct BlockRef {
  int32_t head_group = 0;
  int32_t q_chunk = 0;
  int32_t kv_chunk = 0;
  friend auto operator<=>(const BlockRef&, const BlockRef&) = default;
};
std::string to_string(const BlockRef& block);

enum class OpKind : uint8_t { compute, send, recv, collective, merge };
// Schedules use the first four; all_reduce and send_recv are standalone collectives only
// (`simulate --collective`), which parse_collective_kind (the schedule form) does not read.
enum class CollectiveKind : uint8_t { all_gather, reduce_scatter, all_to_all, permute, all_reduce, send_recv };
std::string to_string(OpKind kind);
std::string to_string(CollectiveKind kind);
bool parse_op_kind(const std::string& text, OpKind& kind);
bool parse_collective_kind(const std::string& text, CollectiveKind& kind);

// The pass an operation belongs to (never Pass::both).
struct Op {
  OpKind kind = OpKind::compute;
  Pass pass = Pass::forward;
  int32_t gpu = 0;
  int32_t stream = 0;
  int32_t peer = -1;        // send: destination; recv: source; collective: its index
  uint32_t first = 0;       // compute: into Schedule::blocks; send/recv/merge: into Schedule::items
  uint32_t count = 0;
  friend bool operator==(const Op&, const Op&) = default;
};

struct Transfer {
  int32_t src = 0;
  int32_t dst = 0;
  uint32_t first_item = 0;  // into Schedule::items
  uint32_t item_count = 0;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

// A group operation: every member runs one op naming it; it completes when all have arrived.
// Its data movement is the list of transfers (the bytes an ideal algorithm must move), so
// all collectives are costed and checked the same way as point-to-point traffic.
struct Collective {
  CollectiveKind kind = CollectiveKind::all_gather;
  Pass pass = Pass::forward;
  std::vector<int32_t> members;
  std::vector<Transfer> transfers;
  friend bool operator==(const Collective&, const Collective&) = default;
};

// An algorithm's two-dimensional parameter, "8x16": first = query chunks per tile (mesh), grid
// rows (attention2d), Ulysses degree (usp); second = key chunks per tile, grid columns, ring
// degree.
struct TileShape {
  int32_t first = 1;
  int32_t second = 1;
  friend bool operator==(const TileShape&, const TileShape&) = default;
};
TileShape parse_tile(const std::string& text);  // throws UserError
std::string to_string(const TileShape& tile);

// What `Schedule::ops` hold. `full`: every GPU's program. `rotation`: the programs of GPUs
// 0 .. period - 1 alone, for a schedule that every GPU runs alike up to rotation: GPU g runs GPU
// (g mod period)'s ops with every GPU index (its own, a peer's) and every chunk shifted by
// g - g mod period, modulo the GPU count; its collectives are among GPUs held, each standing for
// its twins among the GPUs shifted. A ring has period 1 on chunks of equal work, a Mesh of a x b
// tiles period a (one row of its GPU grid; 1 when b = 1), USP u x r period u (one Ulysses
// group, with its all-to-alls), ATTENTION2D's ring variant on 1 x P or P x 1 period 1; any
// multiple of these that divides P holds too (a ring under leaves of 256 GPUs: 256,
// sim/symmetric_period.hpp). A ring at 1,024 GPUs is 6 M ops in full and 6 K in this form, and
// on a uniform network GPU g's figures are GPU (g mod period)'s. The analysis, the checker, the
// analytical cost model (schedules/rotation.hpp; on a topology, where every shifted copy of a
// transfer is as fast), the link loads and the simulator, on a network that looks the same from
// every shifted GPU (sim/src/rotation_resources.hpp), read this form; every other consumer needs
// the full program and says so (require_full_program).
enum class ProgramForm : uint8_t { full, rotation };

struct Schedule {
  std::string algorithm;     // generator name, e.g. "mesh"
  std::string variant;       // e.g. "8x16 greedy"; free text for people, never parsed
  std::optional<TileShape> tile;  // the algorithm's tile or grid where it has one (mesh, attention2d, usp)
  Problem problem;
  Layout layout = Layout::contiguous;
  int32_t gpus = 1;
  int32_t head_groups = 1;
  ProgramForm form = ProgramForm::full;
  int32_t period = 1;  // rotation: the GPUs whose programs `ops` hold (a divisor of gpus)
  std::vector<std::string> stream_names;
  // Remote-chunk buffers of each stream (parallel to stream_names; 0 = unbounded). A receive on
  // a bounded stream takes one buffer and holds it until every op that reads what it brought
  // has run (a merge empties an inbox); the next receive waits for a free one. The dependency
  // analysis turns this into ordering, so every consumer honours it alike.
  std::vector<int32_t> stream_buffers;
  // The program: shared between copies until one is changed (shared_vector.hpp), so that a
  // copy made to change the problem alone (schedules::with_batch) does not copy the program.
  SharedVector<Op> ops;
  SharedVector<BlockRef> blocks;
  SharedVector<DataItem> items;
  SharedVector<Collective> collectives;

  int32_t chunks() const { return gpus; }
  int32_t owner(int32_t chunk) const { return chunk; }
  std::span<const BlockRef> blocks_of(const Op& op) const { return {blocks.data() + op.first, op.count}; }
  std::span<const DataItem> items_of(const Op& op) const { return {items.data() + op.first, op.count}; }
  std::span<const DataItem> items_of(const Transfer& transfer) const {
    return {items.data() + transfer.first_item, transfer.item_count};
  }
  // Remote-chunk buffers of a stream (0 = unbounded; streams without an entry are unbounded).
  int32_t buffers_of_stream(int32_t stream) const {
    return stream >= 0 && static_cast<size_t>(stream) < stream_buffers.size() ? stream_buffers[static_cast<size_t>(stream)] : 0;
  }
  std::string name() const { return variant.empty() ? algorithm : algorithm + " " + variant; }
  // The schedule's identity (algorithm, variant, tile, problem, layout, GPUs, head groups,
  // streams) without its ops, blocks, items and collectives: what a report names it by.
  Schedule identity() const;
  std::string describe(const Op& op) const;  // "GPU 3 recv KV[2] from GPU 2 (op 17, stream kv_recv)"
  size_t index_of(const Op& op) const { return static_cast<size_t>(&op - ops.data()); }
};

// Whether two schedules make every GPU do the same: the same name, layout, GPUs, head groups,
// streams, ops, blocks, items and collectives. Their problems are not compared. The schedule
// cache no longer calls it (it compares Mesh plans, schedules/mesh_plan.hpp); it is the reference
// the tests hold that comparison against.
bool same_program(const Schedule& a, const Schedule& b);

// Throws std::logic_error naming `consumer` when the schedule holds a few GPUs' programs by
// rotation (ProgramForm): a consumer that runs, routes or writes every GPU's ops cannot use it.
void require_full_program(const Schedule& schedule, const char* consumer);

// Heads of one head group, and key/value heads it needs (replicated when groups > kv heads).
int64_t query_heads_per_group(const Problem& problem, int32_t head_groups);
int64_t kv_heads_per_group(const Problem& problem, int32_t head_groups);

// Appends ops in program order; generators use nothing else to build a schedule.
class ScheduleBuilder {
 public:
  ScheduleBuilder(std::string algorithm, std::string variant, const Problem& problem, Layout layout, int32_t gpus,
                  int32_t head_groups = 1);

  // Index of a named stream, created on first use with `buffers` remote-chunk buffers (0 =
  // unbounded; see Schedule::stream_buffers).
  int32_t stream(const std::string& name, int32_t buffers = 0);
  void compute(int32_t gpu, Pass pass, std::span<const BlockRef> blocks, int32_t stream = 0);
  void compute(int32_t gpu, Pass pass, BlockRef block, int32_t stream = 0) { compute(gpu, pass, {&block, 1}, stream); }
  void send(int32_t gpu, int32_t stream, int32_t to, std::span<const DataItem> items);
  void recv(int32_t gpu, int32_t stream, int32_t from, std::span<const DataItem> items);
  void send(int32_t gpu, int32_t stream, int32_t to, std::initializer_list<DataItem> items) {
    send(gpu, stream, to, std::span<const DataItem>(items.begin(), items.size()));
  }
  void recv(int32_t gpu, int32_t stream, int32_t from, std::initializer_list<DataItem> items) {
    recv(gpu, stream, from, std::span<const DataItem>(items.begin(), items.size()));
  }
  void merge(int32_t gpu, int32_t stream, std::span<const DataItem> items);
  void merge(int32_t gpu, int32_t stream, std::initializer_list<DataItem> items) {
    merge(gpu, stream, std::span<const DataItem>(items.begin(), items.size()));
  }
  // Declares a collective; returns its index. Add its transfers, then one op per member.
  int32_t begin_collective(CollectiveKind kind, Pass pass, std::vector<int32_t> members);
  void add_transfer(int32_t collective, int32_t src, int32_t dst, std::span<const DataItem> items);
  void collective_op(int32_t gpu, int32_t stream, int32_t collective);
  // Pass of the ops appended next (compute ops carry theirs explicitly).
  void set_pass(Pass pass) { pass_ = pass; }
  // What the ops will hold (Schedule::form): for a rotation, the programs of GPUs 0 .. period - 1.
  void set_form(ProgramForm form, int32_t period = 1) {
    schedule_.form = form;
    schedule_.period = period;
  }

  // Room for this many ops, blocks and items, so that the arrays are not regrown (and their
  // pages faulted in again) by doubling. An upper bound does no harm: room never written holds
  // address space, not memory.
  void reserve(size_t ops, size_t blocks, size_t items);

  Schedule finish();
  const Problem& problem() const { return schedule_.problem; }
  size_t op_count() const { return ops_.size(); }

 private:
  uint32_t add_items(std::span<const DataItem> items);
  Schedule schedule_;  // all but the program, which is built in plain vectors below
  // Plain vectors while appending: a SharedVector checks its ownership on every change, which
  // added 40 % to a builder's instructions (callgrind, cost ring at 256 GPUs).
  std::vector<Op> ops_;
  std::vector<BlockRef> blocks_;
  std::vector<DataItem> items_;
  std::vector<Collective> collectives_;
  Pass pass_ = Pass::forward;
};

}  // namespace tessera
