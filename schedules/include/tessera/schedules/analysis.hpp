#pragma once
// The execution structure of a schedule, shared by the checker, the cost model and (later)
// the simulator: derived dependencies, send/recv matching, and an execution order under
// rendezvous semantics (a send and its recv complete together; a collective completes when
// every member has reached it).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/core/uninitialized_allocator.hpp"
#include "tessera/schedules/item_sizes.hpp"
#include "tessera/schedules/op_data.hpp"

namespace tessera::schedules {

// How an op touches a data item (see op_data.hpp): the local copy or partial, or the inbox
// where partials from peers wait for a merge.
enum class Access : uint8_t { read, write, inbox_read, inbox_write };
// Packed into 8 bytes (a DataItem alone takes 12, with the access 16): a schedule at 1,024
// GPUs lists some 20 M accesses, so this halves the analysis's largest array. The head group
// gets 24 bits, the range DataItem::key already gives it; analyze_schedule rejects more.
class DataAccess {
 public:
  static constexpr int32_t kHeadGroupLimit = 1 << 24;
  DataAccess() = default;
  DataAccess(const DataItem& item, Access access)
      : chunk_(item.chunk),
        packed_((static_cast<uint32_t>(item.head_group) << 8) | (static_cast<uint32_t>(item.kind) << 4) |
                static_cast<uint32_t>(access)) {}
  DataItem item() const { return DataItem{kind(), static_cast<int32_t>(packed_ >> 8), chunk_}; }
  DataKind kind() const { return static_cast<DataKind>((packed_ >> 4) & 0xF); }
  int32_t chunk() const { return chunk_; }
  Access access() const { return static_cast<Access>(packed_ & 0xF); }

 private:
  int32_t chunk_ = 0;
  uint32_t packed_ = 0;  // head group (24 bits), kind (4), access (4)
};
static_assert(sizeof(DataAccess) == 8);

// One GPU's memory over a schedule's run (memory_peak.hpp).
struct GpuMemory {
  int64_t resident_bytes = 0;  // its own chunks, inputs and outputs, held throughout
  int64_t transfer_bytes = 0;  // the most held at once on top: received chunks and partials
};

// What an op reads and writes (op_data.hpp), packed, listed for one op at a time: the
// dependency walk, the buffer releases and the memory walk each read every op's list once or
// twice, one GPU after another. Kept for the whole check, the lists were its largest array (a
// contiguous ring at 1,024 GPUs: 19 M accesses, 185 MB with their offsets). One-item and
// one-block ops (most ops of a ring or a mesh) are listed without op_data's four lists.
class OpAccesses {
 public:
  // remember_bytes: the lists op_data makes (ops of many blocks, collectives, unsorted items) are
  // kept up to this many bytes, for a second walk over the same ops. The check lists every op
  // twice (its dependency walk, its memory walk): a sweep's small schedules spent a twentieth of
  // its time in op_data again; kept whole, a plan's collectives at 1,024 GPUs took hundreds of MB.
  explicit OpAccesses(const Schedule& schedule, size_t remember_bytes = 0);
  // op_data's reads, writes, inbox reads and inbox writes of the op, in that order; valid until
  // the next call.
  std::span<const DataAccess> of(size_t op);
  // The same, appended to `out`.
  void append(size_t op, std::vector<DataAccess>& out);

 private:
  const Schedule& schedule_;
  OpData data_;
  std::optional<CollectiveTransfers> transfers_;  // where the schedule has collectives, once one is listed
  std::vector<DataAccess> list_;
  size_t remember_limit_;                         // accesses
  std::vector<DataAccess> remembered_;
  std::vector<std::pair<uint32_t, uint32_t>> remembered_at_;  // per op (only where remembering): start, count + 1 (0: none)
};

struct ScheduleAnalysis {
  // Dependencies in CSR form: op i waits for deps[dep_offsets[i] .. dep_offsets[i+1]).
  // They are the previous op of the same stream, and for each item the op reads (or writes),
  // the last earlier op of the same GPU, per stream, that wrote it.
  std::vector<uint32_t> dep_offsets;
  // (Made unwritten, then filled in op order: core/uninitialized_allocator.hpp says why.)
  std::vector<uint32_t, UninitializedAllocator<uint32_t>> deps;
  std::vector<int32_t> partner;                     // the matched recv of a send and vice versa; -1 otherwise
  std::vector<std::vector<uint32_t>> collective_ops;  // per collective, its member ops
  // (An execution order, one that respects all of the above, is not kept: execution_order below.)
  // The ops by step, then by position in their GPU's program (order_by_step): the order the
  // cost model and the memory walk take them in, the same on every GPU of a schedule run alike
  // up to rotation.
  std::vector<uint32_t> step_order;
  // (Remote-chunk buffers: on a stream with B buffers (Schedule::stream_buffers), the k-th
  // receive depends on the releases of the (k-B)-th, so it waits for a free buffer; those edges
  // are part of `deps`. The releases themselves: buffer_releases below.)
  // (The dependencies reversed are not kept: reverse_dependencies below.)
  // Memory per GPU at one sequence per batch (memory_per_gpu_one_sequence), made by
  // check_schedule once the order is known: the cost model scales it by the batch.
  std::vector<GpuMemory> memory_one_sequence;
  // Every item's bytes at one sequence per batch (item_sizes.hpp), made by check_schedule with
  // the memory above: the cost model scales them by the batch.
  ItemSizes item_sizes;
  // op_pairs of every op (item_sizes.hpp), made by check_schedule for schedules of at most
  // kOpPairsTableMaxOps ops; empty for larger ones.
  std::vector<double> op_pairs;

  std::span<const uint32_t> deps_of(size_t op) const {
    return {deps.data() + dep_offsets[op], dep_offsets[op + 1] - dep_offsets[op]};
  }
};

// Builds dependencies and matching, and checks what can be checked statically: field ranges,
// data present before use (in program order), every send matched by a recv of the same data,
// every collective reached once by each member. Returns the first violation in words, or "".
std::string analyze_schedule(const Schedule& schedule, ScheduleAnalysis& analysis);
// The same, listing accesses through `listed` (made for this schedule), which a later walk reuses.
std::string analyze_schedule(const Schedule& schedule, ScheduleAnalysis& analysis, OpAccesses& listed);

// Remote-chunk buffers. For every receive, the ops whose completion frees what it brought: on
// each stream, the last op that reads a received input before it is replaced, and the merge that
// empties a received partial (CSR; empty for other ops). What the buffer dependencies in `deps`
// were made from, listed again on demand: no consumer of a schedule reads them, and kept in
// every analysis they were 17 MB of a ring at 1,024 GPUs held by a leaf group.
struct BufferReleases {
  std::vector<uint32_t> offsets;  // per op, and one past the last
  std::vector<uint32_t> releases;
  std::span<const uint32_t> of(size_t op) const {
    return {releases.data() + offsets[op], offsets[op + 1] - offsets[op]};
  }
};
// Of a schedule whose fields analyze_schedule accepts.
BufferReleases buffer_releases(const Schedule& schedule);

// The dependencies reversed (CSR): the ops waiting for op i, for a consumer that starts ops as
// their dependencies complete (the simulator, the CPU executor), which builds them once per run.
// Not kept in the analysis: the checker finds its execution order without them, and at 1,024 GPUs
// they were 111 MB of a contiguous ring's 900 MB check.
struct Successors {
  std::vector<uint32_t> offsets;  // per op, and one past the last
  std::vector<uint32_t> list;
  std::span<const uint32_t> of(size_t op) const { return {list.data() + offsets[op], offsets[op + 1] - offsets[op]}; }
};
Successors reverse_dependencies(const ScheduleAnalysis& analysis);

// Runs the schedule abstractly under rendezvous semantics and fills `order` with the ops in an
// order that respects the dependencies, each send right before its recv and a collective's
// members one after another. Returns "" when every op completes, or a description of the
// deadlock (who waits on whom).
std::string find_execution_order(const Schedule& schedule, const ScheduleAnalysis& analysis, std::vector<uint32_t>& order);
// The same for a checked schedule, whose order the check found (std::logic_error otherwise): for
// the executors, which issue ops one after another. Not kept in the analysis: the cost model and
// the simulator never read it, and at 1,024 GPUs it was 34 MB of a contiguous ring's.
std::vector<uint32_t> execution_order(const Schedule& schedule, const ScheduleAnalysis& analysis);

// The ops by step, then by position in their GPU's program, then by index. An op's step is one
// past the latest of its dependencies' steps; a send and its recv, and a collective's members,
// share the latest of theirs. So it is an execution order too (every dependency at an earlier
// step, partners at the same), and one whose order on a GPU does not hang on how ties between
// GPUs fall: the execution order's queue takes GPUs by index, which makes GPU 0 of a ring,
// whose sender is the last GPU, the odd one out in the order its transfers queue for its links (the cost
// model) and in what it holds at once (the memory walk). On a schedule that every GPU runs
// alike up to rotation, GPU g's ops in this order are its held GPU's shifted, so the programs
// held alone (ProgramForm::rotation) walk as the full one does. Needs an execution order (`order`)
// and the dependencies; takes the order's room for its own.
std::vector<uint32_t> order_by_step(const Schedule& schedule, const ScheduleAnalysis& analysis,
                                    std::vector<uint32_t> order);

}  // namespace tessera::schedules
