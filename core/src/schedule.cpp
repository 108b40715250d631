#include "tessera/core/schedule.hpp"

#include <algorithm>
#include <stdexcept>

#include "tessera/core/error.hpp"

namespace tessera {

namespace {
constexpr const char* kKindNames[kDataKindCount] = {"Q", "KV", "O", "LSE", "dO", "Stats", "dQ", "dKV"};
}

std::string to_string(DataKind kind) { return kKindNames[static_cast<int>(kind)]; }

bool parse_data_kind(const std::string& text, DataKind& kind) {
  for (int index = 0; index < kDataKindCount; ++index) {
    if (text == kKindNames[index]) {
      kind = static_cast<DataKind>(index);
      return true;
    }
  }
  return false;
}

std::string to_string(const DataItem& item) {
  std::string text = to_string(item.kind) + "[";
  if (item.head_group != 0) text += "h" + std::to_string(item.head_group) + ",";
  return text + std::to_string(item.chunk) + "]";
}

std::string to_string(const BlockRef& block) {
  std::string text = "(";
  if (block.head_group != 0) text += "h" + std::to_string(block.head_group) + ",";
  return text + std::to_string(block.q_chunk) + "," + std::to_string(block.kv_chunk) + ")";
}

std::string to_string(OpKind kind) {
  switch (kind) {
    case OpKind::compute: return "compute";
    case OpKind::send: return "send";
    case OpKind::recv: return "recv";
    case OpKind::collective: return "collective";
    case OpKind::merge: return "merge";
  }
  return "?";
}

std::string to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_gather: return "all-gather";
    case CollectiveKind::reduce_scatter: return "reduce-scatter";
    case CollectiveKind::all_to_all: return "all-to-all";
    case CollectiveKind::permute: return "permute";
    case CollectiveKind::all_reduce: return "all-reduce";
    case CollectiveKind::send_recv: return "send-recv";
  }
  return "?";
}

bool parse_op_kind(const std::string& text, OpKind& kind) {
  for (OpKind candidate : {OpKind::compute, OpKind::send, OpKind::recv, OpKind::collective, OpKind::merge}) {
    if (text == to_string(candidate)) {
      kind = candidate;
      return true;
    }
  }
  return false;
}

bool parse_collective_kind(const std::string& text, CollectiveKind& kind) {
  for (CollectiveKind candidate : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                   CollectiveKind::all_to_all, CollectiveKind::permute}) {
    if (text == to_string(candidate)) {
      kind = candidate;
      return true;
    }
  }
  return false;
}

bool same_program(const Schedule& a, const Schedule& b) {
  return a.algorithm == b.algorithm && a.variant == b.variant && a.tile == b.tile && a.layout == b.layout &&
         a.form == b.form && a.period == b.period && a.gpus == b.gpus && a.head_groups == b.head_groups &&
         a.stream_names == b.stream_names && a.stream_buffers == b.stream_buffers && a.ops == b.ops && a.blocks == b.blocks && a.items == b.items &&
         a.collectives == b.collectives;
}

void require_full_program(const Schedule& schedule, const char* consumer) {
  if (schedule.form != ProgramForm::full)
    throw std::logic_error(std::string(consumer) + ": schedule '" + schedule.name() +
                           "' holds the programs of " + std::to_string(schedule.period) +
                           " GPU(s) alone (by rotation); this needs every GPU's");
}

std::string Schedule::describe(const Op& op) const {
  auto list_items = [&](std::span<const DataItem> list) {
    std::string text;
    for (size_t index = 0; index < list.size() && index < 4; ++index) {
      if (index) text += " ";
      text += to_string(list[index]);
    }
    if (list.size() > 4) text += " ...(" + std::to_string(list.size()) + " items)";
    return text;
  };
  std::string text = "GPU " + std::to_string(op.gpu) + " ";
  switch (op.kind) {
    case OpKind::compute: {
      text += std::string(op.pass == Pass::backward ? "compute-backward " : "compute-forward ");
      auto list = blocks_of(op);
      for (size_t index = 0; index < list.size() && index < 4; ++index) text += to_string(list[index]);
      if (list.size() > 4) text += "...(" + std::to_string(list.size()) + " blocks)";
      break;
    }
    case OpKind::send: text += "send " + list_items(items_of(op)) + " to GPU " + std::to_string(op.peer); break;
    case OpKind::recv: text += "recv " + list_items(items_of(op)) + " from GPU " + std::to_string(op.peer); break;
    case OpKind::merge: text += "merge " + list_items(items_of(op)); break;
    case OpKind::collective:
      text += to_string(collectives[static_cast<size_t>(op.peer)].kind) + " #" + std::to_string(op.peer);
      break;
  }
  text += " (op " + std::to_string(index_of(op));
  if (op.stream >= 0 && static_cast<size_t>(op.stream) < stream_names.size())
    text += ", stream " + stream_names[static_cast<size_t>(op.stream)];
  return text + ")";
}

int64_t query_heads_per_group(const Problem& problem, int32_t head_groups) { return problem.heads / head_groups; }

int64_t kv_heads_per_group(const Problem& problem, int32_t head_groups) {
  return std::max<int64_t>(1, problem.kv_heads / head_groups);
}

ScheduleBuilder::ScheduleBuilder(std::string algorithm, std::string variant, const Problem& problem, Layout layout,
                                 int32_t gpus, int32_t head_groups) {
  schedule_.algorithm = std::move(algorithm);
  schedule_.variant = std::move(variant);
  schedule_.problem = problem;
  schedule_.layout = layout;
  schedule_.gpus = gpus;
  schedule_.head_groups = head_groups;
  stream("compute");  // stream 0 is always the compute stream
}

int32_t ScheduleBuilder::stream(const std::string& name, int32_t buffers) {
  auto& names = schedule_.stream_names;
  auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) return static_cast<int32_t>(it - names.begin());
  names.push_back(name);
  schedule_.stream_buffers.push_back(std::max(0, buffers));
  return static_cast<int32_t>(names.size() - 1);
}

void ScheduleBuilder::reserve(size_t ops, size_t blocks, size_t items) {
  ops_.reserve(ops);
  blocks_.reserve(blocks);
  items_.reserve(items);
}

Schedule ScheduleBuilder::finish() {
  schedule_.ops = std::move(ops_);
  schedule_.blocks = std::move(blocks_);
  schedule_.items = std::move(items_);
  schedule_.collectives = std::move(collectives_);
  return std::move(schedule_);
}

uint32_t ScheduleBuilder::add_items(std::span<const DataItem> items) {
  auto first = static_cast<uint32_t>(items_.size());
  items_.insert(items_.end(), items.begin(), items.end());
  return first;
}

void ScheduleBuilder::compute(int32_t gpu, Pass pass, std::span<const BlockRef> blocks, int32_t stream_index) {
  if (blocks.empty()) return;
  Op op;
  op.kind = OpKind::compute;
  op.pass = pass;
  op.gpu = gpu;
  op.stream = stream_index;
  op.first = static_cast<uint32_t>(blocks_.size());
  op.count = static_cast<uint32_t>(blocks.size());
  blocks_.insert(blocks_.end(), blocks.begin(), blocks.end());
  ops_.push_back(op);
}

void ScheduleBuilder::send(int32_t gpu, int32_t stream_index, int32_t to, std::span<const DataItem> items) {
  if (items.empty()) return;
  ops_.push_back(Op{OpKind::send, pass_, gpu, stream_index, to, add_items(items),
                    static_cast<uint32_t>(items.size())});
}

void ScheduleBuilder::recv(int32_t gpu, int32_t stream_index, int32_t from, std::span<const DataItem> items) {
  if (items.empty()) return;
  ops_.push_back(Op{OpKind::recv, pass_, gpu, stream_index, from, add_items(items),
                    static_cast<uint32_t>(items.size())});
}

void ScheduleBuilder::merge(int32_t gpu, int32_t stream_index, std::span<const DataItem> items) {
  if (items.empty()) return;
  ops_.push_back(Op{OpKind::merge, pass_, gpu, stream_index, -1, add_items(items),
                    static_cast<uint32_t>(items.size())});
}

int32_t ScheduleBuilder::begin_collective(CollectiveKind kind, Pass pass, std::vector<int32_t> members) {
  collectives_.push_back(Collective{kind, pass, std::move(members), {}});
  return static_cast<int32_t>(collectives_.size() - 1);
}

void ScheduleBuilder::add_transfer(int32_t collective, int32_t src, int32_t dst, std::span<const DataItem> items) {
  if (items.empty()) return;
  uint32_t first = add_items(items);
  collectives_[static_cast<size_t>(collective)].transfers.push_back(
      Transfer{src, dst, first, static_cast<uint32_t>(items.size())});
}

void ScheduleBuilder::collective_op(int32_t gpu, int32_t stream_index, int32_t collective) {
  Op op;
  op.kind = OpKind::collective;
  op.pass = collectives_[static_cast<size_t>(collective)].pass;
  op.gpu = gpu;
  op.stream = stream_index;
  op.peer = collective;
  ops_.push_back(op);
}

TileShape parse_tile(const std::string& text) {
  auto cross = text.find_first_of("xX");
  auto number = [&](const std::string& part) -> int32_t {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9)
      throw UserError("tile '" + text + "' is not of the form AxB with positive integers (e.g. 8x16)");
    int32_t value = std::stoi(part);
    if (value <= 0) throw UserError("tile '" + text + "' has a zero side; expected positive integers (e.g. 8x16)");
    return value;
  };
  if (cross == std::string::npos)
    throw UserError("tile '" + text + "' is not of the form AxB with positive integers (e.g. 8x16)");
  return TileShape{number(text.substr(0, cross)), number(text.substr(cross + 1))};
}

std::string to_string(const TileShape& tile) { return std::to_string(tile.first) + "x" + std::to_string(tile.second); }

Schedule Schedule::identity() const {
  Schedule identity;
  identity.algorithm = algorithm;
  identity.variant = variant;
  identity.tile = tile;
  identity.problem = problem;
  identity.layout = layout;
  identity.gpus = gpus;
  identity.head_groups = head_groups;
  identity.form = form;
  identity.period = period;
  identity.stream_names = stream_names;
  identity.stream_buffers = stream_buffers;
  return identity;
}

}  // namespace tessera
