#include "tessera/schedules/schedule_json.hpp"

#include <fstream>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::schedules {

using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw UserError(where + ": " + what); }

const json& field(const json& object, const std::string& where, const char* name) {
  if (!object.is_object()) fail(where, "expected an object");
  auto it = object.find(name);
  if (it == object.end()) fail(where, std::string("missing field '") + name + "'");
  return *it;
}

int64_t integer(const json& value, const std::string& where, int64_t low, int64_t high) {
  if (!value.is_number_integer()) fail(where, "expected an integer");
  int64_t number = value.get<int64_t>();
  if (number < low || number > high)
    fail(where, std::to_string(number) + " is out of range [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  return number;
}

std::string text(const json& value, const std::string& where) {
  if (!value.is_string()) fail(where, "expected a string");
  return value.get<std::string>();
}

template <typename Parse>
auto parsed(const json& value, const std::string& where, Parse parse) {
  try {
    return parse(text(value, where));
  } catch (const UserError& error) {
    fail(where, error.what());
  }
}

json item_to_json(const DataItem& item) { return json::array({to_string(item.kind), item.head_group, item.chunk}); }

DataItem item_from_json(const json& value, const std::string& where, const Schedule& schedule) {
  if (!value.is_array() || value.size() != 3) fail(where, "expected [kind, head_group, chunk]");
  DataItem item;
  std::string kind = text(value[0], where + "[0]");
  if (!parse_data_kind(kind, item.kind))
    fail(where + "[0]", "unknown data kind '" + kind + "' (expected Q, KV, O, LSE, dO, Stats, dQ, dKV)");
  item.head_group = static_cast<int32_t>(integer(value[1], where + "[1]", 0, schedule.head_groups - 1));
  item.chunk = static_cast<int32_t>(integer(value[2], where + "[2]", 0, schedule.chunks() - 1));
  return item;
}

std::vector<DataItem> items_from_json(const json& value, const std::string& where, const Schedule& schedule) {
  if (!value.is_array() || value.empty()) fail(where, "expected a non-empty array of items");
  std::vector<DataItem> items;
  for (size_t index = 0; index < value.size(); ++index)
    items.push_back(item_from_json(value[index], where + "[" + std::to_string(index) + "]", schedule));
  return items;
}

Pass op_pass_from_json(const json& value, const std::string& where) {
  Pass pass = parsed(value, where, parse_pass);
  if (pass == Pass::both) fail(where, "an operation belongs to one pass: forward or backward");
  return pass;
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
  constexpr int64_t kBig = int64_t{1} << 40;
  Problem problem;
  problem.batch = integer(field(value, where, "batch"), where + ".batch", 1, kBig);
  problem.seq_len = integer(field(value, where, "seq_len"), where + ".seq_len", 1, kBig);
  problem.heads = integer(field(value, where, "heads"), where + ".heads", 1, 1 << 20);
  problem.kv_heads = integer(field(value, where, "kv_heads"), where + ".kv_heads", 1, 1 << 20);
  problem.head_dim = integer(field(value, where, "head_dim"), where + ".head_dim", 1, 1 << 20);
  problem.head_dim_v = value.contains("head_dim_v")
                           ? integer(value["head_dim_v"], where + ".head_dim_v", 1, 1 << 20)
                           : problem.head_dim;
  problem.dtype = parsed(field(value, where, "dtype"), where + ".dtype", parse_dtype);
  problem.pass = parsed(field(value, where, "pass"), where + ".pass", parse_pass);
  const json& mask = field(value, where, "mask");
  const std::string mask_where = where + ".mask";
  problem.mask.kind = parsed(field(mask, mask_where, "kind"), mask_where + ".kind", parse_mask_kind);
  if (problem.mask.kind == MaskKind::sliding_window)
    problem.mask.window_tokens =
        integer(field(mask, mask_where, "window_tokens"), mask_where + ".window_tokens", 1, kBig);
  if (problem.mask.kind == MaskKind::documents) {
    const json& lengths = field(mask, mask_where, "document_lengths");
    if (!lengths.is_array()) fail(mask_where + ".document_lengths", "expected an array of lengths");
    for (size_t index = 0; index < lengths.size(); ++index)
      problem.mask.document_lengths.push_back(
          integer(lengths[index], mask_where + ".document_lengths[" + std::to_string(index) + "]", 1, kBig));
  }
  try {
    problem.validate();
  } catch (const UserError& error) {
    fail(where, error.what());
  }
  return problem;
}

json schedule_to_json(const Schedule& schedule) {
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
  json collectives = json::array();
  for (const auto& collective : schedule.collectives) {
    json transfers = json::array();
    for (const auto& transfer : collective.transfers) {
      json items = json::array();
      for (const auto& item : schedule.items_of(transfer)) items.push_back(item_to_json(item));
      transfers.push_back({{"src", transfer.src}, {"dst", transfer.dst}, {"items", items}});
    }
    collectives.push_back({{"kind", to_string(collective.kind)},
                           {"pass", to_string(collective.pass)},
                           {"members", collective.members},
                           {"transfers", transfers}});
  }
  out["collectives"] = collectives;
  json ops = json::array();
  for (const auto& op : schedule.ops) {
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
    ops.push_back(entry);
  }
  out["ops"] = ops;
  return out;
}

Schedule schedule_from_json(const json& in) {
  if (!in.is_object()) fail("schedule", "expected a JSON object");
  if (text(field(in, "schedule", "format"), "format") != "tessera-schedule")
    fail("format", "expected \"tessera-schedule\"");
  int64_t version = integer(field(in, "schedule", "version"), "version", 1, 1 << 20);
  if (version != kScheduleFormatVersion)
    fail("version", "this Tessera reads schedule format version " + std::to_string(kScheduleFormatVersion) +
                        ", the file has version " + std::to_string(version));
  Schedule schedule;
  schedule.algorithm = text(field(in, "schedule", "algorithm"), "algorithm");
  schedule.variant = in.contains("variant") ? text(in["variant"], "variant") : "";
  if (in.contains("tile")) schedule.tile = parsed(in["tile"], "tile", parse_tile);  // optional: "8x16"
  schedule.problem = problem_from_json(field(in, "schedule", "problem"), "problem");
  schedule.layout = parsed(field(in, "schedule", "layout"), "layout", parse_layout);
  schedule.gpus = static_cast<int32_t>(integer(field(in, "schedule", "gpus"), "gpus", 1, 1 << 20));
  if (schedule.problem.seq_len < schedule.gpus)
    fail("gpus", std::to_string(schedule.gpus) + " GPUs but only " + std::to_string(schedule.problem.seq_len) +
                     " tokens: every GPU needs at least one token");
  schedule.head_groups = static_cast<int32_t>(
      integer(field(in, "schedule", "head_groups"), "head_groups", 1, schedule.problem.heads));
  if (schedule.problem.heads % schedule.head_groups != 0)
    fail("head_groups", "heads (" + std::to_string(schedule.problem.heads) + ") must divide into " +
                            std::to_string(schedule.head_groups) + " groups");
  const json& streams = field(in, "schedule", "streams");
  if (!streams.is_array() || streams.empty()) fail("streams", "expected a non-empty array of stream names");
  for (size_t index = 0; index < streams.size(); ++index)
    schedule.stream_names.push_back(text(streams[index], "streams[" + std::to_string(index) + "]"));
  // Optional (files from before buffers existed): every stream unbounded.
  schedule.stream_buffers.assign(schedule.stream_names.size(), 0);
  if (in.contains("stream_buffers")) {
    const json& buffers = in["stream_buffers"];
    if (!buffers.is_array() || buffers.size() != streams.size())
      fail("stream_buffers", "expected an array of " + std::to_string(streams.size()) +
                                 " buffer counts, one per stream (0 = unbounded)");
    for (size_t index = 0; index < buffers.size(); ++index)
      schedule.stream_buffers[index] =
          static_cast<int32_t>(integer(buffers[index], "stream_buffers[" + std::to_string(index) + "]", 0, 1 << 20));
  }

  const int64_t last_gpu = schedule.gpus - 1;
  const json& collectives = field(in, "schedule", "collectives");
  if (!collectives.is_array()) fail("collectives", "expected an array");
  for (size_t c = 0; c < collectives.size(); ++c) {
    const std::string where = "collectives[" + std::to_string(c) + "]";
    Collective collective;
    collective.kind = parsed(field(collectives[c], where, "kind"), where + ".kind", [&](const std::string& name) {
      CollectiveKind kind;
      if (!parse_collective_kind(name, kind))
        throw UserError("unknown collective '" + name + "' (expected all-gather, reduce-scatter, all-to-all, permute)");
      return kind;
    });
    collective.pass = op_pass_from_json(field(collectives[c], where, "pass"), where + ".pass");
    const json& members = field(collectives[c], where, "members");
    if (!members.is_array() || members.empty()) fail(where + ".members", "expected a non-empty array of GPUs");
    for (size_t m = 0; m < members.size(); ++m)
      collective.members.push_back(
          static_cast<int32_t>(integer(members[m], where + ".members[" + std::to_string(m) + "]", 0, last_gpu)));
    const json& transfers = field(collectives[c], where, "transfers");
    if (!transfers.is_array()) fail(where + ".transfers", "expected an array");
    for (size_t t = 0; t < transfers.size(); ++t) {
      const std::string transfer_where = where + ".transfers[" + std::to_string(t) + "]";
      Transfer transfer;
      transfer.src = static_cast<int32_t>(
          integer(field(transfers[t], transfer_where, "src"), transfer_where + ".src", 0, last_gpu));
      transfer.dst = static_cast<int32_t>(
          integer(field(transfers[t], transfer_where, "dst"), transfer_where + ".dst", 0, last_gpu));
      auto is_member = [&](int32_t gpu) {
        return std::find(collective.members.begin(), collective.members.end(), gpu) != collective.members.end();
      };
      if (!is_member(transfer.src) || !is_member(transfer.dst))
        fail(transfer_where, "src and dst must be members of the collective");
      auto items = items_from_json(field(transfers[t], transfer_where, "items"), transfer_where + ".items", schedule);
      transfer.first_item = static_cast<uint32_t>(schedule.items.size());
      transfer.item_count = static_cast<uint32_t>(items.size());
      schedule.items.insert(schedule.items.end(), items.begin(), items.end());
      collective.transfers.push_back(transfer);
    }
    schedule.collectives.push_back(std::move(collective));
  }

  const json& ops = field(in, "schedule", "ops");
  if (!ops.is_array()) fail("ops", "expected an array");
  schedule.ops.reserve(ops.size());
  for (size_t index = 0; index < ops.size(); ++index) {
    const std::string where = "ops[" + std::to_string(index) + "]";
    const json& entry = ops[index];
    Op op;
    std::string kind = text(field(entry, where, "op"), where + ".op");
    if (!parse_op_kind(kind, op.kind))
      fail(where + ".op", "unknown operation '" + kind + "' (expected compute, send, recv, collective, merge)");
    op.gpu = static_cast<int32_t>(integer(field(entry, where, "gpu"), where + ".gpu", 0, last_gpu));
    op.stream = static_cast<int32_t>(integer(field(entry, where, "stream"), where + ".stream", 0,
                                             static_cast<int64_t>(schedule.stream_names.size()) - 1));
    op.pass = op_pass_from_json(field(entry, where, "pass"), where + ".pass");
    switch (op.kind) {
      case OpKind::compute: {
        const json& blocks = field(entry, where, "blocks");
        if (!blocks.is_array() || blocks.empty()) fail(where + ".blocks", "expected a non-empty array of blocks");
        op.first = static_cast<uint32_t>(schedule.blocks.size());
        op.count = static_cast<uint32_t>(blocks.size());
        for (size_t b = 0; b < blocks.size(); ++b) {
          const std::string block_where = where + ".blocks[" + std::to_string(b) + "]";
          const json& block = blocks[b];
          if (!block.is_array() || block.size() != 3) fail(block_where, "expected [head_group, q_chunk, kv_chunk]");
          schedule.blocks.push_back(BlockRef{
              static_cast<int32_t>(integer(block[0], block_where + "[0]", 0, schedule.head_groups - 1)),
              static_cast<int32_t>(integer(block[1], block_where + "[1]", 0, schedule.chunks() - 1)),
              static_cast<int32_t>(integer(block[2], block_where + "[2]", 0, schedule.chunks() - 1))});
        }
        break;
      }
      case OpKind::send:
      case OpKind::recv:
      case OpKind::merge: {
        if (op.kind != OpKind::merge) {
          op.peer = static_cast<int32_t>(integer(field(entry, where, "peer"), where + ".peer", 0, last_gpu));
          if (op.peer == op.gpu) fail(where + ".peer", "a GPU cannot send to or receive from itself");
        }
        auto items = items_from_json(field(entry, where, "items"), where + ".items", schedule);
        op.first = static_cast<uint32_t>(schedule.items.size());
        op.count = static_cast<uint32_t>(items.size());
        schedule.items.insert(schedule.items.end(), items.begin(), items.end());
        break;
      }
      case OpKind::collective: {
        op.peer = static_cast<int32_t>(integer(field(entry, where, "collective"), where + ".collective", 0,
                                               static_cast<int64_t>(schedule.collectives.size()) - 1));
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
  std::ifstream file(path);
  if (!file) throw UserError(path + ": cannot open the file");
  json parsed_json;
  try {
    parsed_json = json::parse(file);
  } catch (const json::parse_error& error) {
    throw UserError(path + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  try {
    return schedule_from_json(parsed_json);
  } catch (const UserError& error) {
    throw UserError(path + ": " + error.what());
  }
}

void write_schedule_file(const Schedule& schedule, const std::string& path) {
  std::ofstream file(path);
  if (!file) throw UserError(path + ": cannot write the file");
  file << schedule_to_json(schedule).dump() << "\n";
}

}  // namespace tessera::schedules
