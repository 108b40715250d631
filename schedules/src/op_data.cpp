#include "tessera/schedules/op_data.hpp"

#include <algorithm>
#include <cstdint>

namespace tessera::schedules {

namespace {
DataItem from_key(uint64_t key) {
  return DataItem{static_cast<DataKind>(key >> 56), static_cast<int32_t>((key >> 32) & 0xFFFFFF),
                  static_cast<int32_t>(key & 0xFFFFFFFF)};
}

// Sorted as packed integer keys: plain integer comparisons, the hot path of every analysis.
void sort_unique(std::vector<DataItem>& items) {
  if (items.size() < 2) return;
  thread_local std::vector<uint64_t> keys;
  keys.clear();
  for (const auto& item : items) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  items.clear();
  for (uint64_t key : keys) items.push_back(from_key(key));
}
}  // namespace

void op_data(const Schedule& schedule, const Op& op, OpData& out) {
  out.reads.clear();
  out.writes.clear();
  out.inbox_reads.clear();
  out.inbox_writes.clear();
  switch (op.kind) {
    case OpKind::compute: {
      // A tile's blocks come row by row, so consecutive blocks mostly share their query chunk
      // (or key chunk): items equal to the previous block's are skipped here, which leaves the
      // sorted, deduplicated result below unchanged and makes its sort much shorter.
      const BlockRef* previous = nullptr;
      for (const auto& block : schedule.blocks_of(op)) {
        const int32_t hg = block.head_group;
        const bool same_group = previous != nullptr && previous->head_group == hg;
        const bool new_query = !same_group || previous->q_chunk != block.q_chunk;
        const bool new_key = !same_group || previous->kv_chunk != block.kv_chunk;
        previous = &block;
        if (new_query) out.reads.push_back({DataKind::Q, hg, block.q_chunk});
        if (new_key) out.reads.push_back({DataKind::KV, hg, block.kv_chunk});
        if (op.pass == Pass::forward) {
          if (new_query) {
            out.writes.push_back({DataKind::O, hg, block.q_chunk});
            out.writes.push_back({DataKind::LSE, hg, block.q_chunk});
          }
        } else {
          if (new_query) {
            out.reads.push_back({DataKind::dO, hg, block.q_chunk});
            out.reads.push_back({DataKind::Stats, hg, block.q_chunk});
            out.writes.push_back({DataKind::dQ, hg, block.q_chunk});
          }
          if (new_key) out.writes.push_back({DataKind::dKV, hg, block.kv_chunk});
        }
      }
      break;
    }
    case OpKind::send:
      for (const auto& item : schedule.items_of(op)) {
        out.reads.push_back(item);
        if (is_accumulator(item.kind)) out.writes.push_back(item);  // a sent partial leaves the GPU
      }
      break;
    case OpKind::recv:
      for (const auto& item : schedule.items_of(op))
        (is_accumulator(item.kind) ? out.inbox_writes : out.writes).push_back(item);
      break;
    case OpKind::merge:
      for (const auto& item : schedule.items_of(op)) {
        out.inbox_reads.push_back(item);
        out.reads.push_back(item);
        out.writes.push_back(item);
      }
      break;
    case OpKind::collective: {
      const Collective& collective = schedule.collectives[static_cast<size_t>(op.peer)];
      for (const auto& transfer : collective.transfers) {
        if (transfer.src == op.gpu) {
          for (const auto& item : schedule.items_of(transfer)) {
            out.reads.push_back(item);
            if (is_accumulator(item.kind)) out.writes.push_back(item);
          }
        }
        if (transfer.dst == op.gpu)
          for (const auto& item : schedule.items_of(transfer))
            (is_accumulator(item.kind) ? out.inbox_writes : out.writes).push_back(item);
      }
      break;
    }
  }
  sort_unique(out.reads);
  sort_unique(out.writes);
  sort_unique(out.inbox_reads);
  sort_unique(out.inbox_writes);
}

}  // namespace tessera::schedules
