#include "tessera/schedules/schedule_json.hpp"

#include <algorithm>
#include <vector>
#include <cstdint>
#include <fstream>

#include "tessera/core/checked_math.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/resource_limits.hpp"

namespace tessera::schedules {

using nlohmann::json;

namespace {

// Limits of what a schedule file may describe, from what its readers can represent: the checker
// keys a (GPU, item) pair with 20 bits of GPU and 16 bits of head group (checker.cpp), and the
// problem's pair counts are 64-bit, so a sequence stops at 2^31 tokens (Problem::validate).
constexpr int64_t kMaxGpus = int64_t{1} << 20;
constexpr int64_t kMaxHeadGroups = int64_t{1} << 16;
constexpr int64_t kMaxSeqTokens = int64_t{1} << 31;
constexpr int64_t kMaxHeadsOrDim = int64_t{1} << 20;
constexpr int64_t kMaxBatch = int64_t{1} << 40;
constexpr int64_t kMaxStreams = int64_t{1} << 20;

// Every message is "PATH: what" (read_schedule_file puts the file's name in front).
[[noreturn]] void fail(const std::string& where, const std::string& what) { throw UserError(where + ": " + what); }

std::string type_of(const json& value) { return value.type_name(); }

const json& object(const json& value, const std::string& where) {
  if (!value.is_object()) fail(where, "expected a JSON object, got " + type_of(value));
  return value;
}

// An array; `shape` completes "expected ..." when the value is not one (or is empty).
const json& array(const json& value, const std::string& where, const std::string& shape, bool non_empty = false) {
  if (!value.is_array()) fail(where, "expected " + shape + ", got " + type_of(value));
  if (non_empty && value.empty()) fail(where, "expected " + shape + ", got an empty array");
  return value;
}

const json& field(const json& value, const std::string& where, const char* name) {
  object(value, where);
  auto it = value.find(name);
  if (it == value.end()) fail(where, std::string("missing field '") + name + "'");
  return *it;
}

// A whole number in [low, high]. A JSON float is refused (a count is never fractional, and a
// figure such as 1e30 has no int64 value); so is an unsigned value past INT64_MAX, which
// get<int64_t>() would wrap.
int64_t integer(const json& value, const std::string& where, int64_t low, int64_t high) {
  const std::string range = "[" + std::to_string(low) + ", " + std::to_string(high) + "]";
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail(where, std::to_string(value.get<uint64_t>()) + " is out of range " + range);
  if (!value.is_number_integer()) {
    if (value.is_number()) fail(where, "expected an integer in " + range + ", got " + json_text(value));
    fail(where, "expected an integer in " + range + ", got " + type_of(value));
  }
  const int64_t number = value.get<int64_t>();
  if (number < low || number > high) fail(where, std::to_string(number) + " is out of range " + range);
  return number;
}

int32_t integer32(const json& value, const std::string& where, int64_t low, int64_t high) {
  return static_cast<int32_t>(integer(value, where, low, std::min<int64_t>(high, INT32_MAX)));
}

std::string text(const json& value, const std::string& where) {
  if (!value.is_string()) fail(where, "expected a string, got " + type_of(value));
  return value.get<std::string>();
}

std::string index_path(const std::string& where, size_t index) { return where + "[" + std::to_string(index) + "]"; }

template <typename Parse>
auto parsed(const json& value, const std::string& where, Parse parse) {
  const std::string name = text(value, where);
  try {
    return parse(name);
  } catch (const UserError& error) {
    fail(where, error.what());
  }
}

// The pools index by uint32_t (Op::first, Transfer::first_item).
void require_pool_room(size_t size, size_t adding, const std::string& where) {
  if (adding > UINT32_MAX - std::min<size_t>(size, UINT32_MAX))
    fail(where, "the schedule names more than 2^32 blocks or items in all");
}

json item_to_json(const DataItem& item) { return json::array({to_string(item.kind), item.head_group, item.chunk}); }

DataItem item_from_json(const json& value, const std::string& where, const Schedule& schedule) {
  if (!value.is_array() || value.size() != 3)
    fail(where, "expected [kind, head_group, chunk], got " +
                    (value.is_array() ? "an array of " + std::to_string(value.size()) : type_of(value)));
  DataItem item;
  std::string kind = text(value[0], where + "[0]");
  if (!parse_data_kind(kind, item.kind))
    fail(where + "[0]", "unknown data kind " + tessera::quoted(kind) + " (expected Q, KV, O, LSE, dO, Stats, dQ, dKV)");
  item.head_group = integer32(value[1], where + "[1]", 0, schedule.head_groups - 1);
  item.chunk = integer32(value[2], where + "[2]", 0, schedule.chunks() - 1);
  return item;
}

std::vector<DataItem> items_from_json(const json& value, const std::string& where, const Schedule& schedule) {
  array(value, where, "a non-empty array of items", true);
  require_pool_room(schedule.items.size(), value.size(), where);
  std::vector<DataItem> items;
  items.reserve(value.size());
  for (size_t index = 0; index < value.size(); ++index)
    items.push_back(item_from_json(value[index], index_path(where, index), schedule));
  return items;
}

Pass op_pass_from_json(const json& value, const std::string& where) {
  Pass pass = parsed(value, where, parse_pass);
  if (pass == Pass::both) fail(where, "an operation belongs to one pass: forward or backward");
  return pass;
}

// What checking a schedule allocates beyond the file's own ops: the block grid's pair cache
// (8 bytes per chunk pair) and, per pass, the checker's map of who computed each block (4 bytes
// per head group and chunk pair). A file that names 2^20 GPUs in a few bytes would otherwise
// ask for terabytes.
void require_memory_to_check(const Schedule& schedule) {
  const double chunk_pairs = static_cast<double>(schedule.chunks()) * static_cast<double>(schedule.chunks());
  require_memory(chunk_pairs * (8.0 + 4.0 * schedule.head_groups),
                 "gpus: checking a schedule of " + std::to_string(schedule.gpus) + " GPUs and " +
                     std::to_string(schedule.head_groups) + " head groups");
}

}  // namespace

json problem_to_json(const Problem& problem) {
  json mask = {{"kind", to_string(problem.mask.kind)}};
  if (problem.mask.kind == MaskKind::sliding_window) mask["window_tokens"] = problem.mask.window_tokens;
  if (problem.mask.kind == MaskKind::documents) mask["document_lengths"] = problem.mask.document_lengths;
  return json{{"batch", problem.batch},       {"seq_len", problem.seq_len},     {"heads", problem.heads},
              {"kv_heads", problem.kv_heads}, {"head_dim", problem.head_dim}, {"head_dim_v", problem.head_dim_v},
              {"dtype", to_string(problem.dtype)}, {"mask", mask},            {"pass", to_string(problem.pass)}};
}

Problem problem_from_json(const json& value, const std::string& where) {
  object(value, where);
  Problem problem;
  problem.batch = integer(field(value, where, "batch"), where + ".batch", 1, kMaxBatch);
  problem.seq_len = integer(field(value, where, "seq_len"), where + ".seq_len", 1, kMaxSeqTokens);
  problem.heads = integer(field(value, where, "heads"), where + ".heads", 1, kMaxHeadsOrDim);
  problem.kv_heads = integer(field(value, where, "kv_heads"), where + ".kv_heads", 1, kMaxHeadsOrDim);
  problem.head_dim = integer(field(value, where, "head_dim"), where + ".head_dim", 1, kMaxHeadsOrDim);
  problem.head_dim_v = value.contains("head_dim_v")
                           ? integer(value.at("head_dim_v"), where + ".head_dim_v", 1, kMaxHeadsOrDim)
                           : problem.head_dim;
  // The largest tensor's size in bytes (batch x tokens x heads x both head dims, 4-byte
  // elements at most) must fit 64 bits, so that no size computed from the problem wraps.
  int64_t bytes = problem.batch;
  for (int64_t factor : {problem.seq_len, problem.heads, problem.head_dim + problem.head_dim_v, int64_t{4}})
    bytes = checked_multiply(bytes, factor, where + ": batch x seq_len x heads x (head_dim + head_dim_v) bytes");
  problem.dtype = parsed(field(value, where, "dtype"), where + ".dtype", parse_dtype);
  problem.pass = parsed(field(value, where, "pass"), where + ".pass", parse_pass);
  const json& mask = field(value, where, "mask");
  const std::string mask_where = where + ".mask";
  problem.mask.kind = parsed(field(mask, mask_where, "kind"), mask_where + ".kind", parse_mask_kind);
  if (problem.mask.kind == MaskKind::sliding_window)
    problem.mask.window_tokens =
        integer(field(mask, mask_where, "window_tokens"), mask_where + ".window_tokens", 1, kMaxSeqTokens);
  if (problem.mask.kind == MaskKind::documents) {
    const std::string lengths_where = mask_where + ".document_lengths";
    const json& lengths = array(field(mask, mask_where, "document_lengths"), lengths_where,
                                "a non-empty array of document lengths", true);
    // Each document has at least one token, so more documents than tokens cannot sum right.
    if (lengths.size() > static_cast<size_t>(problem.seq_len))
      fail(lengths_where, std::to_string(lengths.size()) + " documents but only " + std::to_string(problem.seq_len) +
                              " tokens");
    problem.mask.document_lengths.reserve(lengths.size());
    for (size_t index = 0; index < lengths.size(); ++index)
      problem.mask.document_lengths.push_back(
          integer(lengths[index], index_path(lengths_where, index), 1, problem.seq_len));
  }
  try {
    problem.validate();
  } catch (const UserError& error) {
    fail(where, error.what());
  }
  return problem;
}

namespace {

// Everything but the two long arrays, which are written element by element.
json schedule_header_json(const Schedule& schedule) {
  json out;
  out["format"] = "tessera-schedule";
  out["version"] = kScheduleFormatVersion;
  out["algorithm"] = schedule.algorithm;
  out["variant"] = schedule.variant;
  if (schedule.tile) out["tile"] = to_string(*schedule.tile);
  out["problem"] = problem_to_json(schedule.problem);
  out["layout"] = to_string(schedule.layout);
  out["gpus"] = schedule.gpus;
  out["head_groups"] = schedule.head_groups;
  out["streams"] = schedule.stream_names;
  out["stream_buffers"] = schedule.stream_buffers;
  return out;
}

json transfer_to_json(const Schedule& schedule, const Transfer& transfer) {
  json items = json::array();
  for (const auto& item : schedule.items_of(transfer)) items.push_back(item_to_json(item));
  return {{"src", transfer.src}, {"dst", transfer.dst}, {"items", items}};
}

// Without its transfers, which are written one by one (an all-gather on P GPUs has P^2).
json collective_header_json(const Collective& collective) {
  return {{"kind", to_string(collective.kind)}, {"pass", to_string(collective.pass)}, {"members", collective.members}};
}

json collective_to_json(const Schedule& schedule, const Collective& collective) {
  json out = collective_header_json(collective);
  json transfers = json::array();
  for (const auto& transfer : collective.transfers) transfers.push_back(transfer_to_json(schedule, transfer));
  out["transfers"] = transfers;
  return out;
}

// An object's members in the library's sorted key order, with `streamed` keys written by
// `write_array(key)` in place of their (placeholder) value.
template <typename WriteArray>
void write_object(const json& object, const std::vector<std::string>& streamed, std::ostream& out,
                  WriteArray write_array) {
  out << '{';
  bool first = true;
  for (const auto& [key, value] : object.items()) {
    out << (first ? "" : ",") << json_text(json(key)) << ':';
    first = false;
    if (std::find(streamed.begin(), streamed.end(), key) != streamed.end()) {
      out << '[';
      write_array(key);
      out << ']';
    } else {
      out << json_text(value);
    }
  }
  out << '}';
}

json op_to_json(const Schedule& schedule, const Op& op) {
  json entry = {{"gpu", op.gpu}, {"stream", op.stream}, {"op", to_string(op.kind)}, {"pass", to_string(op.pass)}};
  switch (op.kind) {
    case OpKind::compute: {
      json blocks = json::array();
      for (const auto& block : schedule.blocks_of(op))
        blocks.push_back(json::array({block.head_group, block.q_chunk, block.kv_chunk}));
      entry["blocks"] = blocks;
      break;
    }
    case OpKind::send:
    case OpKind::recv:
    case OpKind::merge: {
      if (op.kind != OpKind::merge) entry["peer"] = op.peer;
      json items = json::array();
      for (const auto& item : schedule.items_of(op)) items.push_back(item_to_json(item));
      entry["items"] = items;
      break;
    }
    case OpKind::collective: entry["collective"] = op.peer; break;
  }
  return entry;
}

}  // namespace

json schedule_to_json(const Schedule& schedule) {
  require_full_program(schedule, "schedule_to_json");
  json out = schedule_header_json(schedule);
  json collectives = json::array();
  for (const auto& collective : schedule.collectives) collectives.push_back(collective_to_json(schedule, collective));
  out["collectives"] = collectives;
  json ops = json::array();
  for (const auto& op : schedule.ops) ops.push_back(op_to_json(schedule, op));
  out["ops"] = ops;
  return out;
}

void write_schedule_json(const Schedule& schedule, std::ostream& out) {
  // The text schedule_to_json(schedule) would dump, byte for byte, without the whole document in
  // memory: a document takes some 25 times its text's size, gigabytes for an all-gather on 1,024
  // GPUs. Placeholders put the streamed arrays in their sorted places.
  json header = schedule_header_json(schedule);
  header["collectives"] = nullptr;
  header["ops"] = nullptr;
  write_object(header, {"collectives", "ops"}, out, [&](const std::string& key) {
    if (key == "ops") {
      for (size_t i = 0; i < schedule.ops.size(); ++i)
        out << (i == 0 ? "" : ",") << json_text(op_to_json(schedule, schedule.ops[i]));
      return;
    }
    for (size_t c = 0; c < schedule.collectives.size(); ++c) {
      const Collective& collective = schedule.collectives[c];
      out << (c == 0 ? "" : ",");
      json collective_header = collective_header_json(collective);
      collective_header["transfers"] = nullptr;
      write_object(collective_header, {"transfers"}, out, [&](const std::string&) {
        for (size_t t = 0; t < collective.transfers.size(); ++t)
          out << (t == 0 ? "" : ",") << json_text(transfer_to_json(schedule, collective.transfers[t]));
      });
    }
  });
}

Schedule schedule_from_json(const json& in) {
  object(in, "schedule");
  if (text(field(in, "schedule", "format"), "format") != "tessera-schedule")
    fail("format", "expected \"tessera-schedule\"");
  int64_t version = integer(field(in, "schedule", "version"), "version", 1, 1 << 20);
  if (version != kScheduleFormatVersion)
    fail("version", "this Tessera reads schedule format version " + std::to_string(kScheduleFormatVersion) +
                        ", the file has version " + std::to_string(version));
  Schedule schedule;
  schedule.algorithm = text(field(in, "schedule", "algorithm"), "algorithm");
  schedule.variant = in.contains("variant") ? text(in.at("variant"), "variant") : "";
  if (in.contains("tile")) schedule.tile = parsed(in.at("tile"), "tile", parse_tile);  // optional: "8x16"
  schedule.problem = problem_from_json(field(in, "schedule", "problem"), "problem");
  schedule.layout = parsed(field(in, "schedule", "layout"), "layout", parse_layout);
  schedule.gpus = integer32(field(in, "schedule", "gpus"), "gpus", 1, kMaxGpus);
  if (schedule.problem.seq_len < schedule.gpus)
    fail("gpus", std::to_string(schedule.gpus) + " GPUs but only " + std::to_string(schedule.problem.seq_len) +
                     " tokens: every GPU needs at least one token");
  schedule.head_groups = integer32(field(in, "schedule", "head_groups"), "head_groups", 1,
                                   std::min(schedule.problem.heads, kMaxHeadGroups));
  if (schedule.problem.heads % schedule.head_groups != 0)
    fail("head_groups", "heads (" + std::to_string(schedule.problem.heads) + ") must divide into " +
                            std::to_string(schedule.head_groups) + " groups");
  require_memory_to_check(schedule);
  const json& streams = array(field(in, "schedule", "streams"), "streams", "a non-empty array of stream names", true);
  if (streams.size() > static_cast<size_t>(kMaxStreams))
    fail("streams", std::to_string(streams.size()) + " streams, more than the " + std::to_string(kMaxStreams) +
                        " a schedule may have");
  for (size_t index = 0; index < streams.size(); ++index)
    schedule.stream_names.push_back(text(streams[index], index_path("streams", index)));
  // Optional (files from before buffers existed): every stream unbounded.
  schedule.stream_buffers.assign(schedule.stream_names.size(), 0);
  if (in.contains("stream_buffers")) {
    const json& buffers = in.at("stream_buffers");
    if (!buffers.is_array() || buffers.size() != streams.size())
      fail("stream_buffers", "expected an array of " + std::to_string(streams.size()) +
                                 " buffer counts, one per stream (0 = unbounded)");
    for (size_t index = 0; index < buffers.size(); ++index)
      schedule.stream_buffers[index] = integer32(buffers[index], index_path("stream_buffers", index), 0, 1 << 20);
  }

  const int64_t last_gpu = schedule.gpus - 1;
  const json& collectives = array(field(in, "schedule", "collectives"), "collectives", "an array of collectives");
  for (size_t c = 0; c < collectives.size(); ++c) {
    const std::string where = index_path("collectives", c);
    const json& entry = object(collectives[c], where);
    Collective collective;
    collective.kind = parsed(field(entry, where, "kind"), where + ".kind", [&](const std::string& name) {
      CollectiveKind kind;
      if (!parse_collective_kind(name, kind))
        throw UserError("unknown collective " + tessera::quoted(name) + " (expected all-gather, reduce-scatter, all-to-all, permute)");
      return kind;
    });
    collective.pass = op_pass_from_json(field(entry, where, "pass"), where + ".pass");
    const json& members = array(field(entry, where, "members"), where + ".members", "a non-empty array of GPUs", true);
    if (members.size() > static_cast<size_t>(schedule.gpus))
      fail(where + ".members", std::to_string(members.size()) + " members but the schedule has " +
                                   std::to_string(schedule.gpus) + " GPUs");
    for (size_t m = 0; m < members.size(); ++m)
      collective.members.push_back(integer32(members[m], index_path(where + ".members", m), 0, last_gpu));
    std::vector<int32_t> sorted = collective.members;
    std::sort(sorted.begin(), sorted.end());
    if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      fail(where + ".members", "GPU " + std::to_string(*twice) + " appears twice");
    auto is_member = [&](int32_t gpu) { return std::binary_search(sorted.begin(), sorted.end(), gpu); };
    const json& transfers = array(field(entry, where, "transfers"), where + ".transfers", "an array of transfers");
    for (size_t t = 0; t < transfers.size(); ++t) {
      const std::string transfer_where = index_path(where + ".transfers", t);
      const json& transfer_json = object(transfers[t], transfer_where);
      Transfer transfer;
      transfer.src = integer32(field(transfer_json, transfer_where, "src"), transfer_where + ".src", 0, last_gpu);
      transfer.dst = integer32(field(transfer_json, transfer_where, "dst"), transfer_where + ".dst", 0, last_gpu);
      if (!is_member(transfer.src) || !is_member(transfer.dst))
        fail(transfer_where, "src and dst must be members of the collective");
      auto items = items_from_json(field(transfer_json, transfer_where, "items"), transfer_where + ".items", schedule);
      transfer.first_item = static_cast<uint32_t>(schedule.items.size());
      transfer.item_count = static_cast<uint32_t>(items.size());
      schedule.items.insert(schedule.items.end(), items.begin(), items.end());
      collective.transfers.push_back(transfer);
    }
    schedule.collectives.push_back(std::move(collective));
  }

  const json& ops = array(field(in, "schedule", "ops"), "ops", "an array of operations");
  schedule.ops.reserve(ops.size());
  for (size_t index = 0; index < ops.size(); ++index) {
    const std::string where = index_path("ops", index);
    const json& entry = object(ops[index], where);
    Op op;
    std::string kind = text(field(entry, where, "op"), where + ".op");
    if (!parse_op_kind(kind, op.kind))
      fail(where + ".op", "unknown operation " + tessera::quoted(kind) + " (expected compute, send, recv, collective, merge)");
    op.gpu = integer32(field(entry, where, "gpu"), where + ".gpu", 0, last_gpu);
    op.stream = integer32(field(entry, where, "stream"), where + ".stream", 0,
                          static_cast<int64_t>(schedule.stream_names.size()) - 1);
    op.pass = op_pass_from_json(field(entry, where, "pass"), where + ".pass");
    switch (op.kind) {
      case OpKind::compute: {
        const std::string blocks_where = where + ".blocks";
        const json& blocks = array(field(entry, where, "blocks"), blocks_where, "a non-empty array of blocks", true);
        require_pool_room(schedule.blocks.size(), blocks.size(), blocks_where);
        op.first = static_cast<uint32_t>(schedule.blocks.size());
        op.count = static_cast<uint32_t>(blocks.size());
        for (size_t b = 0; b < blocks.size(); ++b) {
          const std::string block_where = index_path(blocks_where, b);
          const json& block = blocks[b];
          if (!block.is_array() || block.size() != 3)
            fail(block_where, "expected [head_group, q_chunk, kv_chunk], got " +
                                  (block.is_array() ? "an array of " + std::to_string(block.size()) : type_of(block)));
          schedule.blocks.push_back(BlockRef{integer32(block[0], block_where + "[0]", 0, schedule.head_groups - 1),
                                             integer32(block[1], block_where + "[1]", 0, schedule.chunks() - 1),
                                             integer32(block[2], block_where + "[2]", 0, schedule.chunks() - 1)});
        }
        break;
      }
      case OpKind::send:
      case OpKind::recv:
      case OpKind::merge: {
        if (op.kind != OpKind::merge) {
          op.peer = integer32(field(entry, where, "peer"), where + ".peer", 0, last_gpu);
          if (op.peer == op.gpu) fail(where + ".peer", "a GPU cannot send to or receive from itself");
        }
        auto items = items_from_json(field(entry, where, "items"), where + ".items", schedule);
        op.first = static_cast<uint32_t>(schedule.items.size());
        op.count = static_cast<uint32_t>(items.size());
        schedule.items.insert(schedule.items.end(), items.begin(), items.end());
        break;
      }
      case OpKind::collective: {
        if (schedule.collectives.empty()) fail(where + ".collective", "the schedule has no collectives");
        op.peer = integer32(field(entry, where, "collective"), where + ".collective", 0,
                            static_cast<int64_t>(schedule.collectives.size()) - 1);
        const auto& members = schedule.collectives[static_cast<size_t>(op.peer)].members;
        if (std::find(members.begin(), members.end(), op.gpu) == members.end())
          fail(where + ".gpu", "GPU " + std::to_string(op.gpu) + " is not a member of collective " +
                                   std::to_string(op.peer));
        break;
      }
    }
    schedule.ops.push_back(op);
  }
  return schedule;
}

Schedule read_schedule_file(const std::string& path) {
  const json parsed_json = read_json_file(path, "schedule file");
  try {
    return schedule_from_json(parsed_json);
  } catch (const UserError& error) {
    throw UserError(path + ": " + error.what());
  }
}

void write_schedule_file(const Schedule& schedule, const std::string& path) {
  std::ofstream file(path);
  if (!file) throw UserError(path + ": cannot write the file");
  write_schedule_json(schedule, file);
  file << "\n";
  file.flush();
  if (!file) throw UserError(path + ": writing the schedule failed (disk full?)");
}

}  // namespace tessera::schedules
