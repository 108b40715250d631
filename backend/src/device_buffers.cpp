#include "tessera/backend/device_buffers.hpp"

#include <algorithm>
#include <set>

namespace tessera::backend {

std::vector<int64_t> chunk_token_list(const BlockGrid& grid, int64_t chunk) {
  std::vector<int64_t> tokens;
  tokens.reserve(static_cast<size_t>(grid.chunk_tokens(chunk)));
  for (const auto& part : grid.tokens(chunk).parts)
    for (int64_t index = 0; index < part.count; ++index) tokens.push_back(part.start + index * part.stride);
  return tokens;
}

int64_t first_kv_head_of_group(const Problem& problem, int32_t head_groups, int32_t group) {
  const int64_t heads_per_kv = problem.heads / problem.kv_heads;
  return group * query_heads_per_group(problem, head_groups) / heads_per_kv;
}

int64_t device_item_bytes(const Schedule& schedule, const BlockGrid& grid, const DataItem& item) {
  const Problem& problem = schedule.problem;
  const int64_t rows = grid.chunk_tokens(item.chunk);
  const int64_t hg = query_heads_per_group(problem, schedule.head_groups);
  const int64_t gg = kv_heads_per_group(problem, schedule.head_groups);
  const int64_t d = problem.head_dim, dv = problem.head_dim_v;
  const int64_t element = bytes_per_element(problem.dtype);
  switch (item.kind) {
    case DataKind::Q: return rows * hg * d * element;
    case DataKind::KV: return rows * gg * (d + dv) * element;
    case DataKind::dO: return rows * hg * dv * element;
    case DataKind::Stats: return rows * hg * 2 * 4;
    case DataKind::O: return rows * hg * (dv + 1) * 4;
    case DataKind::LSE: return 0;  // travels inside its O buffer
    case DataKind::dQ: return rows * hg * d * 4;
    case DataKind::dKV: return rows * gg * (d + dv) * 4;
  }
  return 0;
}

DeviceMemoryPlan plan_device_memory(const Schedule& schedule, const BlockGrid& grid) {
  DeviceMemoryPlan plan;
  plan.rank_bytes.assign(static_cast<size_t>(schedule.gpus), 0);
  const Problem& problem = schedule.problem;
  // Inputs held: each rank's own chunk (all head groups), plus every input item it receives.
  std::vector<std::set<uint64_t>> inputs(static_cast<size_t>(schedule.gpus));
  auto hold_input = [&](int32_t rank, const DataItem& item) {
    if (is_accumulator(item.kind)) return;
    if (inputs[static_cast<size_t>(rank)].insert(item.key()).second)
      plan.rank_bytes[static_cast<size_t>(rank)] += device_item_bytes(schedule, grid, item);
  };
  for (int32_t chunk = 0; chunk < schedule.chunks(); ++chunk)
    for (int32_t group = 0; group < schedule.head_groups; ++group) {
      const int32_t owner = schedule.owner(chunk);
      if (problem.has_forward()) {
        hold_input(owner, {DataKind::Q, group, chunk});
        hold_input(owner, {DataKind::KV, group, chunk});
      }
      if (problem.has_backward()) {
        hold_input(owner, {DataKind::Q, group, chunk});
        hold_input(owner, {DataKind::KV, group, chunk});
        hold_input(owner, {DataKind::dO, group, chunk});
        hold_input(owner, {DataKind::Stats, group, chunk});
      }
    }
  auto count_items = [&](int32_t rank, std::span<const DataItem> items) {
    for (const DataItem& item : items) {
      if (is_accumulator(item.kind))
        plan.rank_bytes[static_cast<size_t>(rank)] += device_item_bytes(schedule, grid, item);  // one inbox arrival
      else
        hold_input(rank, item);
    }
  };
  // Local accumulators: one per (rank, item) a compute op writes.
  std::vector<std::set<uint64_t>> partials(static_cast<size_t>(schedule.gpus));
  auto hold_partial = [&](int32_t rank, const DataItem& item) {
    if (partials[static_cast<size_t>(rank)].insert(item.key()).second)
      plan.rank_bytes[static_cast<size_t>(rank)] += device_item_bytes(schedule, grid, item);
  };
  for (const Op& op : schedule.ops) {
    switch (op.kind) {
      case OpKind::recv: count_items(op.gpu, schedule.items_of(op)); break;
      case OpKind::compute:
        for (const BlockRef& block : schedule.blocks_of(op)) {
          if (op.pass == Pass::forward) {
            hold_partial(op.gpu, {DataKind::O, block.head_group, block.q_chunk});
          } else {
            hold_partial(op.gpu, {DataKind::dQ, block.head_group, block.q_chunk});
            hold_partial(op.gpu, {DataKind::dKV, block.head_group, block.kv_chunk});
          }
        }
        break;
      case OpKind::collective:
        // Each member counts the transfers addressed to it, once per collective.
        for (const Transfer& transfer : schedule.collectives[static_cast<size_t>(op.peer)].transfers)
          if (transfer.dst == op.gpu) count_items(op.gpu, schedule.items_of(transfer));
        break;
      case OpKind::send:
      case OpKind::merge: break;
    }
  }
  for (int64_t bytes : plan.rank_bytes) {
    plan.total_bytes += bytes;
    plan.largest_rank_bytes = std::max(plan.largest_rank_bytes, bytes);
  }
  return plan;
}

}  // namespace tessera::backend
