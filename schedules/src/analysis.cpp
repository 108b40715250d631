#include "tessera/schedules/analysis.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>

#include "tessera/core/read_once_blocks.hpp"
#include "tessera/schedules/op_data.hpp"
#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

bool is_input(DataKind kind) { return !is_accumulator(kind); }

// Per-GPU table of "last op that wrote item x on stream s", reset between GPUs. A bit per
// stream marks the streams with a writer, so looking an item up visits only those (mostly one)
// instead of every stream's entry.
class LastWriters {
 public:
  LastWriters(const Schedule& schedule)
      : slots_(schedule),
        streams_(schedule.stream_names.size()),
        words_((streams_ + 63) / 64),
        table_(item_slot_count(schedule) * streams_, kNone),
        written_(item_slot_count(schedule) * words_, 0) {}
  size_t slot(const DataItem& item, bool inbox) const { return slots_(item, inbox); }
  // (Each with a path for one word, up to 64 streams: every schedule so far.)
  bool any(size_t slot) const {
    if (words_ == 1) return written_[slot] != 0;
    for (size_t w = 0; w < words_; ++w)
      if (written_[slot * words_ + w] != 0) return true;
    return false;
  }
  // Calls f(op) for the writer of item on each stream that has one, in stream order.
  template <typename F>
  void for_each_writer(size_t slot, F&& f) const {
    if (words_ == 1) {
      for (uint64_t bits = written_[slot]; bits != 0; bits &= bits - 1)
        f(table_[slot * streams_ + static_cast<size_t>(__builtin_ctzll(bits))]);
      return;
    }
    for (size_t w = 0; w < words_; ++w)
      for (uint64_t bits = written_[slot * words_ + w]; bits != 0; bits &= bits - 1)
        f(table_[slot * streams_ + w * 64 + static_cast<size_t>(__builtin_ctzll(bits))]);
  }
  void set(size_t slot, int32_t stream, uint32_t op) {
    if (!any(slot)) touched_.push_back(slot);
    const auto s = static_cast<size_t>(stream);
    written_[slot * words_ + s / 64] |= uint64_t{1} << (s % 64);
    table_[slot * streams_ + s] = op;
  }
  void reset() {
    if (words_ == 1) {
      for (size_t slot : touched_) written_[slot] = 0;  // (the loop below compiles to a memset call per slot)
    } else {
      for (size_t slot : touched_) std::fill_n(written_.begin() + static_cast<std::ptrdiff_t>(slot * words_), words_, 0);
    }
    touched_.clear();
  }

 private:
  ItemSlots slots_;
  size_t streams_;
  size_t words_;                  // 64-bit words of stream bits per slot
  std::vector<uint32_t> table_;   // valid where the slot's stream bit is set
  std::vector<uint64_t> written_;
  std::vector<size_t> touched_;
};

// First in, first out, in one vector: std::deque's pushes and pops were a fifth of the
// execution order's time. The consumed front is dropped once it is half of the vector, so the
// memory stays within twice the ops waiting at once.
class ReadyQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  void push(uint32_t op) { items_.push_back(op); }
  uint32_t pop() {
    const uint32_t op = items_[head_++];
    if (head_ >= kCompactAt && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return op;
  }

 private:
  static constexpr size_t kCompactAt = 4096;
  std::vector<uint32_t> items_;
  size_t head_ = 0;
};

// Sorts and deduplicates a list of op indices. Most lists are an op's few dependencies: an
// insertion sort over them skips std::sort's set-up, which was a tenth of the analysis.
inline void sort_unique(std::vector<uint32_t>& list) {
  constexpr size_t kInsertionLimit = 16;
  if (list.size() < 2) return;
  if (list.size() > kInsertionLimit) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    return;
  }
  // Insertion sort, then the repeats dropped. (Shifting with a data-dependent bound: a loop
  // shifting [j, kept) compiles to a memmove call per value.)
  for (size_t i = 1; i < list.size(); ++i) {
    const uint32_t value = list[i];
    size_t j = i;
    for (; j > 0 && list[j - 1] > value; --j) list[j] = list[j - 1];
    list[j] = value;
  }
  size_t kept = 1;
  for (size_t i = 1; i < list.size(); ++i)
    if (list[i] != list[kept - 1]) list[kept++] = list[i];
  while (list.size() > kept) list.pop_back();  // (resize is an out-of-line call)
}

std::string check_fields(const Schedule& schedule) {
  const auto streams = static_cast<int32_t>(schedule.stream_names.size());
  auto bad_item = [&](const DataItem& item) {
    return item.head_group < 0 || item.head_group >= schedule.head_groups || item.chunk < 0 ||
           item.chunk >= schedule.chunks();
  };
  const bool rotation = schedule.form == ProgramForm::rotation;
  if (rotation && (schedule.period < 1 || schedule.gpus % schedule.period != 0))
    return "a schedule held by rotation needs a period that divides its " + std::to_string(schedule.gpus) +
           " GPUs, not " + std::to_string(schedule.period);
  // Held by rotation, a collective among GPUs held stands for its twins among the GPUs shifted
  // (a USP group's all-to-all): every member and every transfer's ends must be held GPUs.
  for (size_t c = 0; rotation && c < schedule.collectives.size(); ++c) {
    const Collective& collective = schedule.collectives[c];
    auto held = [&](int32_t gpu) { return gpu >= 0 && gpu < schedule.period; };
    bool inside = std::all_of(collective.members.begin(), collective.members.end(), held);
    for (const Transfer& transfer : collective.transfers) inside = inside && held(transfer.src) && held(transfer.dst);
    if (!inside)
      return "collective " + std::to_string(c) + " reaches beyond the first " + std::to_string(schedule.period) +
             " GPU(s), whose programs a schedule held by rotation lists: its collectives must be among them";
  }
  for (const auto& op : schedule.ops) {
    // Built only for a violation: a string per op was most of this check's time.
    auto where = [&] { return "op " + std::to_string(schedule.index_of(op)); };
    if (op.gpu < 0 || op.gpu >= schedule.gpus) return where() + ": GPU " + std::to_string(op.gpu) + " does not exist";
    if (rotation && op.gpu >= schedule.period)
      return where() + ": a schedule held by rotation lists the programs of its first " + std::to_string(schedule.period) +
             " GPU(s) alone, not GPU " + std::to_string(op.gpu) + "'s";
    if (op.stream < 0 || op.stream >= streams) return where() + ": stream " + std::to_string(op.stream) + " does not exist";
    if (op.pass == Pass::both) return where() + ": an operation belongs to one pass";
    if (op.kind == OpKind::compute) {
      if (op.first + static_cast<size_t>(op.count) > schedule.blocks.size()) return where() + ": blocks out of range";
      for (const auto& block : schedule.blocks_of(op))
        if (block.head_group < 0 || block.head_group >= schedule.head_groups || block.q_chunk < 0 ||
            block.q_chunk >= schedule.chunks() || block.kv_chunk < 0 || block.kv_chunk >= schedule.chunks())
          return where() + ": block " + to_string(block) + " is outside the grid";
    } else if (op.kind == OpKind::collective) {
      if (op.peer < 0 || op.peer >= static_cast<int32_t>(schedule.collectives.size()))
        return where() + ": collective " + std::to_string(op.peer) + " does not exist";
    } else {
      if (op.first + static_cast<size_t>(op.count) > schedule.items.size()) return where() + ": items out of range";
      for (const auto& item : schedule.items_of(op))
        if (bad_item(item)) return where() + ": item " + to_string(item) + " is outside the grid";
      if (op.kind != OpKind::merge && (op.peer < 0 || op.peer >= schedule.gpus || op.peer == op.gpu))
        return schedule.describe(op) + ": peer " + std::to_string(op.peer) + " is not another GPU";
    }
  }
  for (size_t c = 0; c < schedule.collectives.size(); ++c)
    for (const auto& transfer : schedule.collectives[c].transfers) {
      for (const int32_t end : {transfer.src, transfer.dst})
        if (end < 0 || end >= schedule.gpus)
          return "collective " + std::to_string(c) + ": a transfer's GPU " + std::to_string(end) + " does not exist";
      if (transfer.first_item + static_cast<size_t>(transfer.item_count) > schedule.items.size())
        return "collective " + std::to_string(c) + ": a transfer's items are out of range";
      for (const auto& item : schedule.items_of(transfer))
        if (bad_item(item)) return "collective " + std::to_string(c) + ": item " + to_string(item) + " is outside the grid";
    }
  return "";
}

std::string describe_items(const Schedule& schedule, const Op& op) {
  std::string text;
  for (const auto& item : schedule.items_of(op)) text += (text.empty() ? "" : " ") + to_string(item);
  return text;
}

std::string match_transfers(const Schedule& schedule, ScheduleAnalysis& analysis) {
  // The k-th send from s to d pairs with the k-th recv on d from s: sort both by (s, d, program order).
  using Entry = std::pair<uint64_t, uint32_t>;  // (s << 32 | d, op)
  auto pair_key = [](int32_t src, int32_t dst) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst);
  };
  // Ordered by (source, destination), program order within a pair: what sorting the (key, op)
  // pairs gives, from two stable counting sorts over the GPUs (by destination, then by source;
  // check_fields has bounded both) instead of a comparison sort of millions of pairs.
  const auto gpus = static_cast<size_t>(schedule.gpus);
  auto sorted_by_pair = [&](OpKind kind) {
    auto source = [&](const Op& op) { return static_cast<size_t>(kind == OpKind::send ? op.gpu : op.peer); };
    auto destination = [&](const Op& op) { return static_cast<size_t>(kind == OpKind::send ? op.peer : op.gpu); };
    std::vector<uint32_t> count(gpus + 1, 0), by_destination;
    for (const Op& op : schedule.ops)
      if (op.kind == kind) ++count[destination(op) + 1];
    for (size_t g = 0; g < gpus; ++g) count[g + 1] += count[g];
    by_destination.resize(count[gpus]);
    for (uint32_t index = 0; index < schedule.ops.size(); ++index)
      if (schedule.ops[index].kind == kind) by_destination[count[destination(schedule.ops[index])]++] = index;
    std::fill(count.begin(), count.end(), 0);
    for (uint32_t index : by_destination) ++count[source(schedule.ops[index]) + 1];
    for (size_t g = 0; g < gpus; ++g) count[g + 1] += count[g];
    std::vector<Entry> entries(by_destination.size());
    for (uint32_t index : by_destination) {
      const Op& op = schedule.ops[index];
      entries[count[source(op)]++] = Entry{pair_key(static_cast<int32_t>(source(op)), static_cast<int32_t>(destination(op))), index};
    }
    return entries;
  };
  const std::vector<Entry> sends = sorted_by_pair(OpKind::send), recvs = sorted_by_pair(OpKind::recv);
  size_t s = 0, r = 0;
  while (s < sends.size() || r < recvs.size()) {
    bool have_send = s < sends.size(), have_recv = r < recvs.size();
    if (have_send && have_recv && sends[s].first == recvs[r].first) {
      const Op& send = schedule.ops[sends[s].second];
      const Op& recv = schedule.ops[recvs[r].second];
      auto sent = schedule.items_of(send);
      auto received = schedule.items_of(recv);
      if (!std::equal(sent.begin(), sent.end(), received.begin(), received.end()))
        return "mismatched transfer: " + schedule.describe(recv) + " is matched with " + schedule.describe(send) +
               ", which carries different data (" + describe_items(schedule, send) + ")";
      analysis.partner[sends[s].second] = static_cast<int32_t>(recvs[r].second);
      analysis.partner[recvs[r].second] = static_cast<int32_t>(sends[s].second);
      ++s;
      ++r;
      continue;
    }
    bool send_first = have_send && (!have_recv || sends[s].first < recvs[r].first);
    if (send_first) {
      const Op& send = schedule.ops[sends[s].second];
      return "unmatched send: " + schedule.describe(send) + " has no matching recv on GPU " +
             std::to_string(send.peer) + " from GPU " + std::to_string(send.gpu);
    }
    const Op& recv = schedule.ops[recvs[r].second];
    return "unmatched recv: " + schedule.describe(recv) + " has no matching send from GPU " +
           std::to_string(recv.peer) + " to GPU " + std::to_string(recv.gpu);
  }
  return "";
}

// The same for a schedule held by rotation (ProgramForm::rotation). GPU r's k-th recv from s
// pairs with s's k-th send to r. GPU s runs GPU b = s mod period's program shifted by
// t = s - b, so that send is b's k-th send to r - t, carrying b's items shifted by t: each recv
// pairs with one send of the GPUs held, and the execution order and the cost read that send's
// times as its sender's.
std::string match_rotated_transfers(const Schedule& schedule, ScheduleAnalysis& analysis) {
  const int32_t gpus = schedule.gpus, period = schedule.period;
  // Per (held sender, destination), its sends in program order; per (held receiver, source), its recvs.
  auto slot = [gpus](int32_t held, int32_t other) { return static_cast<size_t>(held) * static_cast<size_t>(gpus) + static_cast<size_t>(other); };
  std::vector<std::vector<uint32_t>> sends(static_cast<size_t>(period) * static_cast<size_t>(gpus)), recvs(sends.size());
  for (uint32_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    if (op.kind == OpKind::send) sends[slot(op.gpu, op.peer)].push_back(index);
    if (op.kind == OpKind::recv) recvs[slot(op.gpu, op.peer)].push_back(index);
  }
  std::vector<uint8_t> matched(schedule.ops.size(), 0);
  for (int32_t receiver = 0; receiver < period; ++receiver)
    for (int32_t source = 0; source < gpus; ++source) {
      const auto& received = recvs[slot(receiver, source)];
      if (received.empty()) continue;
      const int32_t sender = base_gpu(source, period), shift = source - sender;
      const auto& sent = sends[slot(sender, rotate(receiver, -shift, gpus))];
      for (size_t k = 0; k < received.size(); ++k) {
        const Op& recv = schedule.ops[received[k]];
        if (k >= sent.size())
          return "unmatched recv: " + schedule.describe(recv) + " has no matching send from GPU " + std::to_string(source) +
                 " (GPU " + std::to_string(sender) + "'s program shifted by " + std::to_string(shift) + ")";
        const Op& send = schedule.ops[sent[k]];
        const auto items = schedule.items_of(send);
        const auto arriving = schedule.items_of(recv);
        bool same = items.size() == arriving.size();
        for (size_t i = 0; same && i < items.size(); ++i) same = rotate(items[i], shift, gpus) == arriving[i];
        if (!same)
          return "mismatched transfer: " + schedule.describe(recv) + " is matched with " + schedule.describe(send) +
                 " shifted by " + std::to_string(shift) + ", which carries different data (" + describe_items(schedule, send) + ")";
        analysis.partner[sent[k]] = static_cast<int32_t>(received[k]);
        analysis.partner[received[k]] = static_cast<int32_t>(sent[k]);
        matched[sent[k]] = 1;
      }
    }
  for (uint32_t index = 0; index < schedule.ops.size(); ++index)
    if (schedule.ops[index].kind == OpKind::send && !matched[index])
      return "unmatched send: " + schedule.describe(schedule.ops[index]) + " has no matching recv on GPU " +
             std::to_string(schedule.ops[index].peer) + " (the programs held, shifted)";
  return "";
}

std::string match_collectives(const Schedule& schedule, ScheduleAnalysis& analysis) {
  analysis.collective_ops.assign(schedule.collectives.size(), {});
  for (uint32_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    if (op.kind != OpKind::collective) continue;
    const Collective& collective = schedule.collectives[static_cast<size_t>(op.peer)];
    if (std::find(collective.members.begin(), collective.members.end(), op.gpu) == collective.members.end())
      return schedule.describe(op) + ": GPU " + std::to_string(op.gpu) + " is not a member of the collective";
    for (uint32_t other : analysis.collective_ops[static_cast<size_t>(op.peer)])
      if (schedule.ops[other].gpu == op.gpu)
        return schedule.describe(op) + ": GPU " + std::to_string(op.gpu) + " joins the same collective twice";
    analysis.collective_ops[static_cast<size_t>(op.peer)].push_back(index);
  }
  for (size_t c = 0; c < schedule.collectives.size(); ++c) {
    const Collective& collective = schedule.collectives[c];
    for (int32_t member : collective.members) {
      bool present = std::any_of(analysis.collective_ops[c].begin(), analysis.collective_ops[c].end(),
                                 [&](uint32_t op) { return schedule.ops[op].gpu == member; });
      if (!present)
        return to_string(collective.kind) + " #" + std::to_string(c) + " has no op on member GPU " +
               std::to_string(member) + ": the other members would wait for ever";
    }
  }
  return "";
}

}  // namespace

OpAccesses::OpAccesses(const Schedule& schedule, size_t remember_bytes)
    : schedule_(schedule), remember_limit_(remember_bytes / sizeof(DataAccess)) {
  // A place per op (8 bytes) only where the ops are few, as for the op pairs' table: a ring at
  // 1,024 GPUs (8 M ops) takes no list from op_data anyway.
  if (remember_limit_ > 0 && schedule.ops.size() <= kOpPairsTableMaxOps) remembered_at_.assign(schedule.ops.size(), {0, 0});
}

std::span<const DataAccess> OpAccesses::of(size_t index) {
  list_.clear();
  append(index, list_);
  return list_;
}

void OpAccesses::append(size_t index, std::vector<DataAccess>& out) {
  const Op& op = schedule_.ops[index];
  // The fast paths below write through a pointer into room made first: push_back's capacity
  // check per access, out of line, was a quarter of this function's time.
  auto room = [&out](size_t most) {
    const size_t start = out.size();
    out.resize(start + most);
    return out.data() + start;
  };
  auto finish = [&out](const DataAccess* end) { out.resize(static_cast<size_t>(end - out.data())); };
  if (op.kind == OpKind::send || op.kind == OpKind::recv || op.kind == OpKind::merge) {
    // Items moved or merged (every such op of a ring, a mesh or ATTENTION2D's rings): what
    // op_data lists for them, without its four lists, where they come sorted and unique (as
    // generators emit them; op_data sorts them otherwise). A send reads them (and writes the
    // partials it sends away), a recv writes them (partials into the inbox), a merge reads,
    // writes and reads the inbox.
    const auto items = schedule_.items_of(op);
    bool in_order = true;
    for (size_t k = 1; k < items.size() && in_order; ++k) in_order = items[k - 1].key() < items[k].key();
    if (in_order) {
      DataAccess* at = room(3 * items.size());
      switch (op.kind) {
        case OpKind::send:
          for (const DataItem& item : items) *at++ = {item, Access::read};
          for (const DataItem& item : items)
            if (is_accumulator(item.kind)) *at++ = {item, Access::write};
          break;
        case OpKind::recv:
          for (const DataItem& item : items)
            if (!is_accumulator(item.kind)) *at++ = {item, Access::write};
          for (const DataItem& item : items)
            if (is_accumulator(item.kind)) *at++ = {item, Access::inbox_write};
          break;
        default:  // merge
          for (Access access : {Access::read, Access::write, Access::inbox_read})
            for (const DataItem& item : items) *at++ = {item, access};
          break;
      }
      finish(at);
      return;
    }
  }
  if (op.count == 1 && op.kind == OpKind::compute) {
    // One block (every op of a ring): op_data's lists for it, in its order (by kind).
    const BlockRef& block = schedule_.blocks[op.first];
    auto of_query = [&](DataKind kind) { return DataItem{kind, block.head_group, block.q_chunk}; };
    auto of_key = [&](DataKind kind) { return DataItem{kind, block.head_group, block.kv_chunk}; };
    DataAccess* at = room(6);
    *at++ = {of_query(DataKind::Q), Access::read};
    *at++ = {of_key(DataKind::KV), Access::read};
    if (op.pass == Pass::forward) {
      *at++ = {of_query(DataKind::O), Access::write};
      *at++ = {of_query(DataKind::LSE), Access::write};
    } else {
      *at++ = {of_query(DataKind::dO), Access::read};
      *at++ = {of_query(DataKind::Stats), Access::read};
      *at++ = {of_query(DataKind::dQ), Access::write};
      *at++ = {of_key(DataKind::dKV), Access::write};
    }
    finish(at);
    return;
  }
  if (!remembered_at_.empty() && remembered_at_[index].second != 0) {
    const auto [start, count] = remembered_at_[index];
    out.insert(out.end(), remembered_.begin() + start, remembered_.begin() + start + (count - 1));
    return;
  }
  const size_t first = out.size();
  // Made at the first collective op listed, once analyze_schedule has bounded the transfers' GPUs.
  if (!schedule_.collectives.empty() && !transfers_) transfers_.emplace(schedule_);
  op_data(schedule_, op, data_, transfers_ ? &*transfers_ : nullptr);
  for (const auto& item : data_.reads) out.push_back({item, Access::read});
  for (const auto& item : data_.writes) out.push_back({item, Access::write});
  for (const auto& item : data_.inbox_reads) out.push_back({item, Access::inbox_read});
  for (const auto& item : data_.inbox_writes) out.push_back({item, Access::inbox_write});
  const size_t count = out.size() - first;
  if (!remembered_at_.empty() && remembered_.size() + count <= remember_limit_) {
    remembered_at_[index] = {static_cast<uint32_t>(remembered_.size()), static_cast<uint32_t>(count + 1)};
    remembered_.insert(remembered_.end(), out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }
}

namespace {

// One GPU's accesses, its ops listed once in program order for the two walks that read them
// all (the buffers' and the dependencies').
class ProgramAccesses {
 public:
  explicit ProgramAccesses(OpAccesses& listed) : listed_(listed) {}
  void list(std::span<const uint32_t> ops) {
    accesses_.clear();
    at_.assign(1, 0);
    for (uint32_t index : ops) {
      listed_.append(index, accesses_);
      at_.push_back(static_cast<uint32_t>(accesses_.size()));
    }
  }
  // The k-th op listed.
  std::span<const DataAccess> of(size_t k) const { return {accesses_.data() + at_[k], at_[k + 1] - at_[k]}; }

 private:
  OpAccesses& listed_;
  std::vector<DataAccess> accesses_;
  std::vector<uint32_t> at_;
};

// The edges that make the k-th receive on a stream of B buffers wait for the ops that free the
// (k-B)-th (its releases), one GPU at a time, and, where asked (buffer_releases), the releases
// themselves. Its tables are one GPU's: every reader of a receive is an op of the receiving GPU.
// (Kept for every receive of the schedule, the last readers and each op's receive number were
// 97 MB of a contiguous ring's check at 1,024 GPUs: 3.1 M receives on 5 streams.)
class BufferWalk {
 public:
  BufferWalk(const Schedule& schedule, bool keep_releases)
      : schedule_(schedule),
        streams_(schedule.stream_names.size()),
        keep_releases_(keep_releases),
        slot_(schedule),
        holder_(item_slot_count(schedule), kNone),
        stream_receives_(streams_),
        stream_position_(streams_) {
    for (size_t stream = 0; stream < streams_; ++stream)
      stream_buffers_.push_back(static_cast<size_t>(schedule.buffers_of_stream(static_cast<int32_t>(stream))));
  }

  // Appends (op, dependency) for the ops of one GPU, `ops` in program order with their accesses
  // listed in `accesses`; by op, ascending.
  void walk(std::span<const uint32_t> ops, const ProgramAccesses& accesses, std::vector<std::pair<uint32_t, uint32_t>>& edges) {
    const size_t streams = streams_;
    for (auto& list : stream_receives_) list.clear();
    receive_ops_.clear();
    for (size_t k = 0; k < ops.size(); ++k) {
      const uint32_t index = ops[k];
      const Op& op = schedule_.ops[index];
      // This GPU's receives are numbered in program order; holder_ names the receive by number.
      const uint32_t receive = op.kind == OpKind::recv ? static_cast<uint32_t>(receive_ops_.size()) : kNone;
      if (op.kind == OpKind::recv) {
        receive_ops_.push_back(index);
        if (last_reader_.size() < receive_ops_.size() * streams) last_reader_.resize(2 * receive_ops_.size() * streams);
        std::fill_n(last_reader_.begin() + static_cast<std::ptrdiff_t>(receive * streams), streams, kNone);
      }
      const auto listed = accesses.of(k);
      for (const auto& access : listed) {
        const bool local_input = access.access() == Access::read && is_input(access.kind());
        if (!local_input && access.access() != Access::inbox_read) continue;
        const uint32_t held_by = holder_[slot_(access.item(), access.access() == Access::inbox_read)];
        if (held_by != kNone) last_reader_[held_by * streams + static_cast<size_t>(op.stream)] = index;
      }
      for (const auto& access : listed) {
        const bool inbox = access.access() == Access::inbox_write || access.access() == Access::inbox_read;
        if (access.access() == Access::read) continue;
        const size_t at = slot_(access.item(), inbox);
        // A receive takes the slot into its buffer; anything else that writes it (a collective
        // gathering resident data, a merge emptying an inbox) ends the buffer's claim.
        const bool claims = op.kind == OpKind::recv && access.access() != Access::inbox_read;
        if (holder_[at] == kNone) touched_.push_back(at);
        holder_[at] = claims ? receive : kNone;
      }
      if (op.kind == OpKind::recv) stream_receives_[static_cast<size_t>(op.stream)].push_back(receive);
    }
    for (size_t at : touched_) holder_[at] = kNone;
    touched_.clear();
    // The k-th receive on a stream of B buffers waits for the releases of the (k-B)-th. Taken
    // in receive order, which is program order and so op order, the edges come out by op, each
    // receive's stream by stream. (Made stream by stream and then insertion-sorted, they cost
    // O(edges^2) per GPU: 90 % of this walk, and 16 % of a 1,024-GPU ring's `simulate`.)
    std::fill(stream_position_.begin(), stream_position_.end(), 0);
    for (size_t receive = 0; receive < receive_ops_.size(); ++receive) {
      const auto stream = static_cast<size_t>(schedule_.ops[receive_ops_[receive]].stream);
      const size_t position = stream_position_[stream]++;
      const size_t buffers = stream_buffers_[stream];
      if (buffers == 0 || position < buffers) continue;
      const size_t earlier = stream_receives_[stream][position - buffers];
      for (size_t s = 0; s < streams; ++s)
        if (last_reader_[earlier * streams + s] != kNone) edges.emplace_back(receive_ops_[receive], last_reader_[earlier * streams + s]);
    }
    if (keep_releases_)
      for (size_t receive = 0; receive < receive_ops_.size(); ++receive)
        for (size_t s = 0; s < streams; ++s)
          if (last_reader_[receive * streams + s] != kNone) releases_.emplace_back(receive_ops_[receive], last_reader_[receive * streams + s]);
  }

  // After every GPU's walk (of an instance keeping them): each receive's last reader on each stream.
  BufferReleases releases() const {
    const size_t op_count = schedule_.ops.size();
    BufferReleases freeing;
    freeing.offsets.assign(op_count + 1, 0);
    for (const auto& [receive, reader] : releases_) ++freeing.offsets[receive + 1];
    for (size_t index = 0; index < op_count; ++index) freeing.offsets[index + 1] += freeing.offsets[index];
    // A receive's readers were kept together, stream by stream: placed in turn, they stay so.
    std::vector<uint32_t> fill(freeing.offsets.begin(), freeing.offsets.end() - 1);
    freeing.releases.assign(releases_.size(), 0);
    for (const auto& [receive, reader] : releases_) freeing.releases[fill[receive]++] = reader;
    return freeing;
  }

 private:
  const Schedule& schedule_;
  const size_t streams_;
  const bool keep_releases_;
  const ItemSlots slot_;
  std::vector<uint32_t> holder_;        // the receive (this GPU's number) whose buffer holds a slot
  std::vector<size_t> touched_;
  std::vector<uint32_t> receive_ops_;   // this GPU's receives, by number
  std::vector<uint32_t> last_reader_;   // per receive of this GPU, its last reader on each stream (kNone where none)
  std::vector<std::vector<uint32_t>> stream_receives_;  // per stream, this GPU's receives on it, by number
  std::vector<size_t> stream_position_;  // per stream, receives on it seen so far
  std::vector<size_t> stream_buffers_;   // per stream, its buffers (0: unbounded)
  std::vector<std::pair<uint32_t, uint32_t>> releases_;  // (receive, reader), where kept
};

// Dependency lists in the order found, GPU by GPU, in blocks of 16 MiB (core/read_once_blocks.hpp).
using FoundDependencies = ReadOnceBlocks<uint32_t>;
constexpr size_t kFoundDependenciesBlock = size_t{4} << 20;

// Each GPU's ops in program order: by_gpu[gpu_offsets[g] .. gpu_offsets[g + 1]).
void programs_by_gpu(const Schedule& schedule, std::vector<uint32_t>& gpu_offsets, std::vector<uint32_t>& by_gpu) {
  const size_t op_count = schedule.ops.size();
  gpu_offsets.assign(static_cast<size_t>(schedule.gpus) + 1, 0);
  for (const auto& op : schedule.ops) ++gpu_offsets[static_cast<size_t>(op.gpu) + 1];
  for (size_t g = 0; g < static_cast<size_t>(schedule.gpus); ++g) gpu_offsets[g + 1] += gpu_offsets[g];
  by_gpu.assign(op_count, 0);
  std::vector<uint32_t> fill(gpu_offsets.begin(), gpu_offsets.end() - 1);
  for (uint32_t index = 0; index < op_count; ++index) by_gpu[fill[static_cast<size_t>(schedule.ops[index].gpu)]++] = index;
}

// Each op's dependencies, sorted and unique, listed in by_gpu order in found_deps; each op's
// count goes to dep_offsets[op + 1]. No (op, dependency) pair list and no sort of it: that list,
// twice the size, was this analysis's memory peak. Its tables are gone by the time
// build_dependencies copies the lists into op order.
std::string find_dependencies(const Schedule& schedule, const std::vector<uint32_t>& gpu_offsets,
                              const std::vector<uint32_t>& by_gpu, ScheduleAnalysis& analysis, OpAccesses& listed,
                              FoundDependencies& found_deps) {
  const size_t op_count = schedule.ops.size();
  // Each GPU's accesses are listed once, for its buffer walk and then its dependency walk; the
  // buffer edges of its ops (by op, as the walk below takes the ops) join their data dependencies.
  ProgramAccesses program(listed);
  BufferWalk buffer_walk(schedule, false);
  std::vector<std::pair<uint32_t, uint32_t>> buffer_edges;  // (op, dependency): at most one per stream for each receive

  analysis.dep_offsets.assign(op_count + 1, 0);
  LastWriters writers(schedule);
  std::vector<uint32_t> last_on_stream(schedule.stream_names.size(), kNone);
  std::vector<uint32_t> found;
  for (int32_t gpu = 0; gpu < schedule.gpus; ++gpu) {
    writers.reset();
    std::fill(last_on_stream.begin(), last_on_stream.end(), kNone);
    const std::span<const uint32_t> ops(by_gpu.data() + gpu_offsets[static_cast<size_t>(gpu)],
                                        gpu_offsets[static_cast<size_t>(gpu) + 1] - gpu_offsets[static_cast<size_t>(gpu)]);
    program.list(ops);
    buffer_edges.clear();
    buffer_walk.walk(ops, program, buffer_edges);
    size_t next_edge = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      const uint32_t index = ops[k];
      const Op& op = schedule.ops[index];
      found.clear();
      if (last_on_stream[static_cast<size_t>(op.stream)] != kNone) found.push_back(last_on_stream[static_cast<size_t>(op.stream)]);
      auto depend_on_writers = [&](size_t slot) {
        writers.for_each_writer(slot, [&](uint32_t writer) {
          if (found.empty() || found.back() != writer) found.push_back(writer);  // (sorted and made unique below)
        });
      };
      const auto accesses = program.of(k);
      for (const auto& access : accesses) {
        const DataItem item = access.item();
        switch (access.access()) {
          case Access::read: {
            size_t slot = writers.slot(item, false);
            bool written = writers.any(slot);
            if (is_input(item.kind)) {
              if (!written && item.chunk != gpu)
                return "data not present: " + schedule.describe(op) + " reads " + to_string(item) +
                       ", which is not GPU " + std::to_string(gpu) + "'s own chunk and was not received earlier";
            } else if (!written && op.kind != OpKind::merge && op.kind != OpKind::collective) {
              // (A collective moves fixed-shape buffers: a partial nothing wrote goes as zeros.)
              return "data not present: " + schedule.describe(op) + " sends the partial " + to_string(item) +
                     ", but nothing on GPU " + std::to_string(gpu) + " computed or merged it before";
            }
            depend_on_writers(slot);
            break;
          }
          case Access::inbox_read: {
            size_t slot = writers.slot(item, true);
            if (!writers.any(slot))
              return "data not present: " + schedule.describe(op) + " merges " + to_string(item) +
                     ", but no partial of it was received earlier";
            depend_on_writers(slot);
            break;
          }
          case Access::write: depend_on_writers(writers.slot(item, false)); break;
          case Access::inbox_write: depend_on_writers(writers.slot(item, true)); break;
        }
      }
      for (const auto& access : accesses) {
        if (access.access() == Access::write) writers.set(writers.slot(access.item(), false), op.stream, index);
        if (access.access() == Access::inbox_write) writers.set(writers.slot(access.item(), true), op.stream, index);
        // A merge empties the inbox it reads, so a later receive into it must wait for the merge
        // (on a GPU the receive would otherwise fold into a buffer still being read, then freed).
        if (access.access() == Access::inbox_read) writers.set(writers.slot(access.item(), true), op.stream, index);
      }
      last_on_stream[static_cast<size_t>(op.stream)] = index;
      for (; next_edge < buffer_edges.size() && buffer_edges[next_edge].first == index; ++next_edge)
        found.push_back(buffer_edges[next_edge].second);
      sort_unique(found);
      for (uint32_t dep : found) found_deps.push_back(dep);  // (a few each: cheaper than insert's bookkeeping)
      analysis.dep_offsets[index + 1] = static_cast<uint32_t>(found.size());
    }
  }
  return "";
}

std::string build_dependencies(const Schedule& schedule, ScheduleAnalysis& analysis, OpAccesses& listed) {
  const size_t op_count = schedule.ops.size();
  std::vector<uint32_t> gpu_offsets, by_gpu;
  programs_by_gpu(schedule, gpu_offsets, by_gpu);
  FoundDependencies found_deps(kFoundDependenciesBlock, op_count * 3);
  if (auto problem = find_dependencies(schedule, gpu_offsets, by_gpu, analysis, listed, found_deps); !problem.empty())
    return problem;
  // Into op order: found_deps holds the lists back to back in by_gpu order. Each GPU's lists go
  // to a few runs of op order, so the pages written grow with the blocks freed.
  for (size_t index = 0; index < op_count; ++index) analysis.dep_offsets[index + 1] += analysis.dep_offsets[index];
  analysis.deps = decltype(analysis.deps)(found_deps.size());
  for (uint32_t position = 0; position < op_count; ++position) {
    const uint32_t index = by_gpu[position];
    found_deps.take(analysis.dep_offsets[index + 1] - analysis.dep_offsets[index], analysis.deps.data() + analysis.dep_offsets[index]);
  }
  return "";
}

}  // namespace

BufferReleases buffer_releases(const Schedule& schedule) {
  std::vector<uint32_t> gpu_offsets, by_gpu;
  programs_by_gpu(schedule, gpu_offsets, by_gpu);
  OpAccesses listed(schedule);
  ProgramAccesses program(listed);
  BufferWalk buffer_walk(schedule, true);
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (size_t gpu = 0; gpu < static_cast<size_t>(schedule.gpus); ++gpu) {
    const std::span<const uint32_t> ops(by_gpu.data() + gpu_offsets[gpu], gpu_offsets[gpu + 1] - gpu_offsets[gpu]);
    program.list(ops);
    edges.clear();
    buffer_walk.walk(ops, program, edges);
  }
  return buffer_walk.releases();
}

std::string analyze_schedule(const Schedule& schedule, ScheduleAnalysis& analysis) {
  OpAccesses listed(schedule);
  return analyze_schedule(schedule, analysis, listed);
}

std::string analyze_schedule(const Schedule& schedule, ScheduleAnalysis& analysis, OpAccesses& listed) {
  analysis = ScheduleAnalysis{};
  analysis.partner.assign(schedule.ops.size(), -1);
  if (schedule.gpus < 1) return "the schedule has no GPUs";
  if (schedule.stream_names.empty()) return "the schedule has no streams";
  if (schedule.head_groups >= DataAccess::kHeadGroupLimit) return "the schedule has more head groups than the analysis can index";
  if (auto problem = check_fields(schedule); !problem.empty()) return problem;
  if (auto problem = schedule.form == ProgramForm::rotation ? match_rotated_transfers(schedule, analysis)
                                                             : match_transfers(schedule, analysis);
      !problem.empty())
    return problem;
  if (auto problem = match_collectives(schedule, analysis); !problem.empty()) return problem;
  return build_dependencies(schedule, analysis, listed);
}

Successors reverse_dependencies(const ScheduleAnalysis& analysis) {
  const size_t op_count = analysis.dep_offsets.empty() ? 0 : analysis.dep_offsets.size() - 1;
  Successors successors;
  successors.offsets.assign(op_count + 1, 0);
  for (uint32_t dep : analysis.deps) ++successors.offsets[dep + 1];
  for (size_t index = 0; index < op_count; ++index) successors.offsets[index + 1] += successors.offsets[index];
  successors.list.assign(successors.offsets.back(), 0);
  std::vector<uint32_t> fill(successors.offsets.begin(), successors.offsets.end() - 1);
  for (uint32_t index = 0; index < op_count; ++index)
    for (uint32_t dep : analysis.deps_of(index)) successors.list[fill[dep]++] = index;
  return successors;
}

std::string find_execution_order(const Schedule& schedule, const ScheduleAnalysis& analysis, std::vector<uint32_t>& found) {
  // Every dependency is an earlier op of the same GPU (build_dependencies): GPUs wait for one
  // another only at a rendezvous (a send and its recv) or a collective. So each GPU runs the ops
  // of each of its streams in program order, as far as their dependencies allow, and is visited
  // again when one of its ops completes; no list of each op's successors is needed (at 1,024
  // GPUs, 111 MB of a contiguous ring's check, and a queue of ops taken GPU after GPU, so every
  // op read was a cache miss). Any execution order serves its readers: the steps (order_by_step),
  // the outputs' walk and the executors read the dependencies' order, never which GPU went first.
  const size_t op_count = schedule.ops.size();
  const auto gpus = static_cast<size_t>(schedule.gpus);
  const size_t streams = schedule.stream_names.size();
  // Lane (GPU, stream): its ops in program order, lanes[lane_offsets[l] .. lane_offsets[l + 1]).
  auto lane_of = [&](const Op& op) { return static_cast<size_t>(op.gpu) * streams + static_cast<size_t>(op.stream); };
  std::vector<uint32_t> lane_offsets(gpus * streams + 1, 0), lanes(op_count);
  for (const Op& op : schedule.ops) ++lane_offsets[lane_of(op) + 1];
  for (size_t lane = 0; lane < gpus * streams; ++lane) lane_offsets[lane + 1] += lane_offsets[lane];
  std::vector<uint32_t> lane_next(lane_offsets.begin(), lane_offsets.end() - 1);
  for (uint32_t index = 0; index < op_count; ++index) lanes[lane_next[lane_of(schedule.ops[index])]++] = index;
  std::copy(lane_offsets.begin(), lane_offsets.end() - 1, lane_next.begin());  // each lane's first op not done

  std::vector<uint8_t> posted(op_count, 0), done(op_count, 0);
  std::vector<uint32_t> arrived(schedule.collectives.size(), 0);
  std::vector<uint8_t> queued(gpus, 1);
  ReadyQueue visits;  // GPUs with an op completed since they were last run
  for (uint32_t gpu = 0; gpu < gpus; ++gpu) visits.push(gpu);
  // Written through a cursor and trimmed to what ran: push_back's bookkeeping, and the
  // vectors' pointers reloaded after every store, were near half of the walk's instructions.
  found.assign(op_count, 0);
  size_t ordered = 0;
  uint32_t* const order = found.data();
  uint32_t current = 0;
  bool progress = false;
  auto complete = [&](uint32_t index) {
    done[index] = 1;
    order[ordered++] = index;
    const auto gpu = static_cast<uint32_t>(schedule.ops[index].gpu);
    if (gpu == current) {
      progress = true;
    } else if (!queued[gpu]) {
      queued[gpu] = 1;
      visits.push(gpu);
    }
  };
  auto ready = [&](uint32_t index) {
    for (uint32_t dep : analysis.deps_of(index))
      if (!done[dep]) return false;
    return true;
  };
  while (!visits.empty()) {
    current = visits.pop();
    queued[current] = 0;
    do {
      progress = false;
      for (size_t lane = current * streams; lane < (current + 1) * streams; ++lane) {
        while (lane_next[lane] < lane_offsets[lane + 1]) {
          const uint32_t index = lanes[lane_next[lane]];
          if (done[index]) {
            ++lane_next[lane];
            continue;
          }
          if (posted[index] || !ready(index)) break;
          posted[index] = 1;
          const Op& op = schedule.ops[index];
          if (op.kind == OpKind::compute || op.kind == OpKind::merge) {
            complete(index);
          } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
            const auto partner = static_cast<uint32_t>(analysis.partner[index]);
            if (!posted[partner]) break;
            // Send first, then its recv: consumers rely on that order.
            complete(op.kind == OpKind::send ? index : partner);
            complete(op.kind == OpKind::send ? partner : index);
          } else {
            const auto c = static_cast<size_t>(op.peer);
            if (++arrived[c] < analysis.collective_ops[c].size()) break;
            for (uint32_t member : analysis.collective_ops[c]) complete(member);
          }
        }
      }
    } while (progress);
  }
  found.resize(ordered);
  if (ordered == op_count) return "";

  // Deadlock: follow "waits for" from a stuck op until an op repeats, and tell that chain.
  auto waits_for = [&](uint32_t index) -> uint32_t {
    const Op& op = schedule.ops[index];
    if (posted[index]) {
      if (op.kind == OpKind::send || op.kind == OpKind::recv) return static_cast<uint32_t>(analysis.partner[index]);
      if (op.kind == OpKind::collective)
        for (uint32_t member : analysis.collective_ops[static_cast<size_t>(op.peer)])
          if (!posted[member]) return member;
      return kNone;
    }
    for (uint32_t dep : analysis.deps_of(index))
      if (!done[dep]) return dep;
    return kNone;
  };
  uint32_t start = kNone;
  for (uint32_t index = 0; index < op_count && start == kNone; ++index)
    if (posted[index] && !done[index]) start = index;
  if (start == kNone)
    for (uint32_t index = 0; index < op_count && start == kNone; ++index)
      if (!done[index]) start = index;
  std::vector<uint32_t> chain;
  std::vector<uint8_t> seen(op_count, 0);
  for (uint32_t at = start; at != kNone && !seen[at] && chain.size() < 64; at = waits_for(at)) {
    seen[at] = 1;
    chain.push_back(at);
  }
  std::string text = "deadlock: " + std::to_string(op_count - found.size()) + " ops can never run; ";
  for (size_t step = 0; step < chain.size() && step < 6; ++step) {
    if (step) text += ", which waits for ";
    text += schedule.describe(schedule.ops[chain[step]]);
  }
  if (chain.size() > 6) text += ", ...";
  for (size_t stream = 0; stream < schedule.stream_names.size(); ++stream)
    if (schedule.buffers_of_stream(static_cast<int32_t>(stream)) > 0) {
      text += " (receives wait for free buffers: stream " + schedule.stream_names[stream] + " has " +
              std::to_string(schedule.buffers_of_stream(static_cast<int32_t>(stream))) +
              "; the schedule may need more, e.g. --buffers 0 for unbounded)";
      break;
    }
  if (!chain.empty()) {
    uint32_t next = waits_for(chain.back());
    if (next != kNone && seen[next]) text += " (a cycle)";
  }
  return text;
}

std::vector<uint32_t> execution_order(const Schedule& schedule, const ScheduleAnalysis& analysis) {
  std::vector<uint32_t> order;
  if (const std::string deadlock = find_execution_order(schedule, analysis, order); !deadlock.empty())
    throw std::logic_error("execution_order: the schedule was never checked: " + deadlock);
  return order;
}

std::vector<uint32_t> order_by_step(const Schedule& schedule, const ScheduleAnalysis& analysis,
                                    std::vector<uint32_t> order) {
  const size_t op_count = schedule.ops.size();
  // An op's step: one past its dependencies' latest, the start of a run. A send and its recv
  // complete together, at the later of their two steps; so do a collective's members.
  constexpr uint32_t kUnset = UINT32_MAX;
  std::vector<uint32_t> step(op_count, kUnset);
  auto posted_step = [&](uint32_t index) {
    uint32_t value = 0;
    for (uint32_t dep : analysis.deps_of(index)) value = std::max(value, step[dep] + 1);
    return value;
  };
  uint32_t last = 0;
  for (uint32_t index : order) {
    if (step[index] != kUnset) continue;
    const Op& op = schedule.ops[index];
    uint32_t value = posted_step(index);
    if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      const auto partner = static_cast<uint32_t>(analysis.partner[index]);
      value = std::max(value, posted_step(partner));
      step[partner] = value;
    } else if (op.kind == OpKind::collective) {
      const auto& members = analysis.collective_ops[static_cast<size_t>(op.peer)];
      for (uint32_t member : members) value = std::max(value, posted_step(member));
      for (uint32_t member : members) step[member] = value;
    }
    step[index] = value;
    last = std::max(last, value);
  }
  // By (step, position in its GPU's program, index): stable counting sorts of the index order
  // by position, then by step. Ties at one step fall by position, not by index: ops of one
  // position on two GPUs are the same op of the program shifted, which never sends to the same
  // GPU, so the transfers that queue for one GPU's link in are ordered by (step, position)
  // alone, the same on every GPU (and a GPU's own ops are in program order within a step).
  // The index order by position: each op's position is its GPU's count of ops before it, so
  // two walks of the index order count, then place, without a table of positions.
  const auto gpus = static_cast<size_t>(schedule.gpus);
  std::vector<uint32_t> next(gpus, 0);
  for (size_t index = 0; index < op_count; ++index) ++next[static_cast<size_t>(schedule.ops[index].gpu)];
  const uint32_t longest = next.empty() ? 0 : *std::max_element(next.begin(), next.end());
  std::vector<uint32_t> offsets(static_cast<size_t>(longest) + 1, 0);
  std::fill(next.begin(), next.end(), 0);
  for (size_t index = 0; index < op_count; ++index) ++offsets[next[static_cast<size_t>(schedule.ops[index].gpu)]++ + 1];
  for (size_t p = 0; p < longest; ++p) offsets[p + 1] += offsets[p];
  // (In the execution order's room, read to the end above: at 1,024 GPUs a contiguous ring's
  // order is 25 MiB, and held beside the three arrays here it made the check's peak.)
  std::vector<uint32_t> by_position = std::move(order);
  by_position.resize(op_count);
  std::fill(next.begin(), next.end(), 0);
  for (uint32_t index = 0; index < op_count; ++index)
    by_position[offsets[next[static_cast<size_t>(schedule.ops[index].gpu)]++]++] = index;
  // Then by step, stably.
  offsets.assign(static_cast<size_t>(last) + 2, 0);
  for (size_t index = 0; index < op_count; ++index) ++offsets[static_cast<size_t>(step[index]) + 1];
  for (size_t s = 0; s <= last; ++s) offsets[s + 1] += offsets[s];
  std::vector<uint32_t> sorted(op_count);
  for (uint32_t index : by_position) sorted[offsets[step[index]]++] = index;
  return sorted;
}

}  // namespace tessera::schedules
