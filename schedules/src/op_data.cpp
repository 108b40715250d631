#include "tessera/schedules/op_data.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera::schedules {

namespace {
DataItem from_key(uint64_t key) {
  return DataItem{static_cast<DataKind>(key >> 56), static_cast<int32_t>((key >> 32) & 0xFFFFFF),
                  static_cast<int32_t>(key & 0xFFFFFFFF)};
}

// Sorted as packed integer keys: plain integer comparisons, the hot path of every analysis.
void sort_unique(std::vector<DataItem>& items) {
  if (items.size() < 2) return;
  // Most lists come sorted and unique already (a transfer's items, a collective's pieces).
  bool in_order = true;
  for (size_t k = 1; k < items.size() && in_order; ++k) in_order = items[k - 1].key() < items[k].key();
  if (in_order) return;
  // A collective's items come transfer by transfer, so their kinds interleave (KV, dKV, KV, ...)
  // with each kind's items in order, and a piece sent to every peer repeats. Such a list is put
  // in order kind by kind, dropping repeats in a row, in one pass: sorting the 2,046 items of an
  // all-gather member at 1,024 GPUs was a quarter of ATTENTION2D 1 x 1024's check. Where a
  // kind's items are out of order, the sort below.
  thread_local std::array<std::vector<uint64_t>, kDataKindCount> by_kind;
  for (auto& list : by_kind) list.clear();
  bool kinds_in_order = true;
  for (size_t k = 0; k < items.size() && kinds_in_order; ++k) {
    const uint64_t key = items[k].key();
    const auto kind = static_cast<size_t>(items[k].kind);
    if (kind >= by_kind.size() || key >> 56 != kind) {  // (a kind or head group out of range: the sort)
      kinds_in_order = false;
      break;
    }
    auto& list = by_kind[kind];
    if (!list.empty() && list.back() >= key) {
      kinds_in_order = list.back() == key;
      continue;
    }
    list.push_back(key);
  }
  if (kinds_in_order) {
    items.clear();
    for (const auto& list : by_kind)
      for (uint64_t key : list) items.push_back(from_key(key));
    return;
  }
  thread_local std::vector<uint64_t> keys;
  keys.clear();
  for (const auto& item : items) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  items.clear();
  for (uint64_t key : keys) items.push_back(from_key(key));
}

// The (head group, chunk) halves of item keys (DataItem::key without the kind) of the query
// chunks and of the key chunks of a compute op's blocks, each sorted and unique. A stamp per
// (head group, chunk) drops repeats before the sort; a block outside the grid (never in a
// checked schedule) just skips the stamp and is left to the sort.
void distinct_chunks(const Schedule& schedule, const Op& op, std::vector<uint64_t>& queries, std::vector<uint64_t>& keys) {
  thread_local std::vector<uint32_t> query_stamp, key_stamp;
  thread_local uint32_t stamp = 0;
  const size_t pairs = static_cast<size_t>(schedule.head_groups) * static_cast<size_t>(schedule.chunks());
  if (query_stamp.size() != pairs || stamp == UINT32_MAX) {
    query_stamp.assign(pairs, 0);
    key_stamp.assign(pairs, 0);
    stamp = 0;
  }
  ++stamp;
  queries.clear();
  keys.clear();
  auto pair_key = [](int32_t head_group, int32_t chunk) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(head_group)) << 32) | static_cast<uint32_t>(chunk);
  };
  auto add = [&](std::vector<uint32_t>& stamps, std::vector<uint64_t>& list, int32_t head_group, int32_t chunk) {
    if (head_group >= 0 && head_group < schedule.head_groups && chunk >= 0 && chunk < schedule.chunks()) {
      uint32_t& seen = stamps[static_cast<size_t>(head_group) * static_cast<size_t>(schedule.chunks()) + static_cast<size_t>(chunk)];
      if (seen == stamp) return;
      seen = stamp;
    }
    list.push_back(pair_key(head_group, chunk));
  };
  for (const auto& block : schedule.blocks_of(op)) {
    add(query_stamp, queries, block.head_group, block.q_chunk);
    add(key_stamp, keys, block.head_group, block.kv_chunk);
  }
  // Most lists come sorted (a tile's blocks row by row). A long one over a narrow range of keys
  // (an ATTENTION2D ring's band of hundreds of chunks, in ring order) is put in order through a
  // bitmap of that range: sorting those was 2.6 % of a 1,024-GPU plan.
  thread_local std::vector<uint64_t> bits;
  for (auto* list : {&queries, &keys}) {
    if (std::is_sorted(list->begin(), list->end(), std::less_equal<uint64_t>())) continue;  // (and distinct)
    const auto [low, high] = std::minmax_element(list->begin(), list->end());
    const uint64_t first = *low, range = *high - *low;  // (range + 1 could wrap; range cannot)
    if (list->size() < 32 || range >= 8 * list->size()) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
      continue;
    }
    bits.assign(range / 64 + 1, 0);
    for (uint64_t key : *list) bits[(key - first) / 64] |= uint64_t{1} << ((key - first) % 64);
    list->clear();
    for (size_t word = 0; word < bits.size(); ++word)
      for (uint64_t rest = bits[word]; rest != 0; rest &= rest - 1)
        list->push_back(first + 64 * word + static_cast<uint64_t>(std::countr_zero(rest)));
  }
}

}  // namespace

CollectiveTransfers::CollectiveTransfers(const Schedule& schedule) {
  // One table per side: the transfers grouped by GPU, GPUs ascending, each group in transfer
  // order. A counting sort over the GPUs that appear (a comparison sort of (GPU, transfer) pairs
  // was 3 % of a 1,024-GPU plan's time, on ATTENTION2D's and USP's collectives).
  const auto gpus = static_cast<size_t>(std::max(schedule.gpus, 0));
  std::vector<uint32_t> count(gpus, 0);  // per GPU; zero again after each table
  auto table_of = [&](const Collective& collective, bool by_sender) {
    auto end_of = [by_sender](const Transfer& transfer) { return by_sender ? transfer.src : transfer.dst; };
    ByGpu table;
    for (const Transfer& transfer : collective.transfers) {
      const int32_t gpu = end_of(transfer);
      // check_fields (analysis.cpp) has bounded every transfer's ends before the analysis asks.
      if (gpu < 0 || static_cast<size_t>(gpu) >= gpus)
        throw std::logic_error("CollectiveTransfers: a transfer's GPU " + std::to_string(gpu) + " is outside the schedule");
      if (count[static_cast<size_t>(gpu)]++ == 0) table.gpus.push_back(gpu);
    }
    std::sort(table.gpus.begin(), table.gpus.end());
    // Each GPU's count becomes the slot of its next transfer.
    uint32_t at = 0;
    for (const int32_t gpu : table.gpus) {
      table.offsets.push_back(at);
      at += std::exchange(count[static_cast<size_t>(gpu)], at);
    }
    table.offsets.push_back(at);
    table.transfers.resize(collective.transfers.size());
    for (uint32_t t = 0; t < collective.transfers.size(); ++t)
      table.transfers[count[static_cast<size_t>(end_of(collective.transfers[t]))]++] = t;
    for (const int32_t gpu : table.gpus) count[static_cast<size_t>(gpu)] = 0;
    return table;
  };
  for (const Collective& collective : schedule.collectives) {
    sent_.push_back(table_of(collective, true));
    received_.push_back(table_of(collective, false));
  }
}

std::span<const uint32_t> CollectiveTransfers::find(const ByGpu& table, int32_t gpu) {
  const auto at = std::lower_bound(table.gpus.begin(), table.gpus.end(), gpu);
  if (at == table.gpus.end() || *at != gpu) return {};
  const auto k = static_cast<size_t>(at - table.gpus.begin());
  return {table.transfers.data() + table.offsets[k], table.offsets[k + 1] - table.offsets[k]};
}

void op_data(const Schedule& schedule, const Op& op, OpData& out, const CollectiveTransfers* transfers) {
  out.reads.clear();
  out.writes.clear();
  out.inbox_reads.clear();
  out.inbox_writes.clear();
  switch (op.kind) {
    case OpKind::compute: {
      // Sorted by key, a compute op's items are, kind by kind (Q, KV, O, LSE, dO, Stats, dQ,
      // dKV), its distinct query chunks or its distinct key chunks. So those two lists are made
      // once, sorted, and expanded per kind: a tile of 8 x 16 blocks sorts 8 and 16 keys, not
      // the 128 key items its rows repeat.
      thread_local std::vector<uint64_t> queries, keys;
      distinct_chunks(schedule, op, queries, keys);
      auto expand = [](DataKind kind, const std::vector<uint64_t>& chunks, std::vector<DataItem>& list) {
        for (uint64_t chunk : chunks) list.push_back(from_key((static_cast<uint64_t>(kind) << 56) | chunk));
      };
      expand(DataKind::Q, queries, out.reads);
      expand(DataKind::KV, keys, out.reads);
      if (op.pass == Pass::forward) {
        expand(DataKind::O, queries, out.writes);
        expand(DataKind::LSE, queries, out.writes);
      } else {
        expand(DataKind::dO, queries, out.reads);
        expand(DataKind::Stats, queries, out.reads);
        expand(DataKind::dQ, queries, out.writes);
        expand(DataKind::dKV, keys, out.writes);
      }
      return;  // sorted and unique already
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
      const auto c = static_cast<size_t>(op.peer);
      const Collective& collective = schedule.collectives[c];
      if (transfers != nullptr) {
        // The same items as the scan below, in another order: the lists are sorted at the end.
        // A member that sends one piece to every other (an all-gather's) lists it once, not once
        // per peer: repeats in a row are dropped here, so the list stays sorted and its sort is
        // skipped (sorting a row of 511 repeats per member was 3 % of a 1,024-GPU plan).
        auto add = [](std::vector<DataItem>& list, const DataItem& item) {
          if (list.empty() || !(list.back() == item)) list.push_back(item);
        };
        for (uint32_t t : transfers->sent_by(c, op.gpu))
          for (const auto& item : schedule.items_of(collective.transfers[t])) {
            add(out.reads, item);
            if (is_accumulator(item.kind)) add(out.writes, item);
          }
        for (uint32_t t : transfers->received_by(c, op.gpu))
          for (const auto& item : schedule.items_of(collective.transfers[t]))
            add(is_accumulator(item.kind) ? out.inbox_writes : out.writes, item);
        break;
      }
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
