// The JSON form of a schedule: a hand-built schedule (every op kind, a collective, two head
// groups, a documents mask) survives the round trip, and malformed inputs are rejected with a
// UserError that names the offending field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/schedule_json.hpp"

using namespace tessera;
using namespace tessera::schedules;
using nlohmann::json;

namespace {

Problem small_problem() {
  Problem problem;
  problem.batch = 2;
  problem.seq_len = 12;
  problem.heads = 8;
  problem.kv_heads = 2;
  problem.head_dim = 64;
  problem.head_dim_v = 32;
  problem.dtype = DType::fp16;
  problem.pass = Pass::both;
  problem.mask.kind = MaskKind::documents;
  problem.mask.document_lengths = {5, 7};
  return problem;
}

// 3 GPUs, 2 head groups. The op list (indices are used by the malformed-input tests):
//  0 compute GPU 0 fwd (h0: 0,0) (h1: 0,0)      5 collective GPU 0 #0
//  1 compute GPU 1 fwd (1,1)                     6 collective GPU 1 #0
//  2 compute GPU 2 fwd (2,2)                     7 merge GPU 1 O[1]
//  3 send GPU 0 -> 1 KV[0] KV[h1,0]              8 send GPU 2 -> 0 dKV[h1,2] (backward)
//  4 recv GPU 1 <- 0 KV[0] KV[h1,0]              9 recv GPU 0 <- 2 dKV[h1,2] (backward)
//                                               10 compute GPU 0 bwd (h1: 2,1)
//                                               11-13 collective GPUs 0, 1, 2 #1
// Collective 0: all-gather, forward, members {0, 1}, transfers 0 -> 1 Q[0] and 1 -> 0 O[h1,1].
// Collective 1: reduce-scatter, backward, members {0, 1, 2}, transfer 2 -> 1 dQ[h1,1].
// (The JSON form does not check data flow or coverage; the checker does.)
Schedule hand_built() {
  ScheduleBuilder builder("hand", "json test", small_problem(), Layout::zigzag, 3, 2);
  const int32_t compute = builder.stream("compute");
  const int32_t net = builder.stream("net", 2);
  const BlockRef first[] = {{0, 0, 0}, {1, 0, 0}};
  builder.compute(0, Pass::forward, first, compute);
  builder.compute(1, Pass::forward, BlockRef{0, 1, 1}, compute);
  builder.compute(2, Pass::forward, BlockRef{0, 2, 2}, compute);
  builder.send(0, net, 1, {DataItem{DataKind::KV, 0, 0}, DataItem{DataKind::KV, 1, 0}});
  builder.recv(1, net, 0, {DataItem{DataKind::KV, 0, 0}, DataItem{DataKind::KV, 1, 0}});
  const int32_t gather = builder.begin_collective(CollectiveKind::all_gather, Pass::forward, {0, 1});
  const DataItem q0[] = {{DataKind::Q, 0, 0}};
  const DataItem o1[] = {{DataKind::O, 1, 1}};
  builder.add_transfer(gather, 0, 1, q0);
  builder.add_transfer(gather, 1, 0, o1);
  builder.collective_op(0, net, gather);
  builder.collective_op(1, net, gather);
  builder.merge(1, compute, {DataItem{DataKind::O, 0, 1}});
  builder.set_pass(Pass::backward);
  builder.send(2, net, 0, {DataItem{DataKind::dKV, 1, 2}});
  builder.recv(0, net, 2, {DataItem{DataKind::dKV, 1, 2}});
  builder.compute(0, Pass::backward, BlockRef{1, 2, 1}, compute);
  const int32_t scatter = builder.begin_collective(CollectiveKind::reduce_scatter, Pass::backward, {0, 1, 2});
  const DataItem dq1[] = {{DataKind::dQ, 1, 1}};
  builder.add_transfer(scatter, 2, 1, dq1);
  for (int32_t gpu : {0, 1, 2}) builder.collective_op(gpu, net, scatter);
  return builder.finish();
}

// Field by field equality; ops and transfers are compared by the blocks and items they name,
// not by their offsets into the shared pools (those may be laid out differently).
void require_same(const Schedule& a, const Schedule& b) {
  REQUIRE(a.algorithm == b.algorithm);
  REQUIRE(a.variant == b.variant);
  REQUIRE(a.layout == b.layout);
  REQUIRE(a.gpus == b.gpus);
  REQUIRE(a.head_groups == b.head_groups);
  REQUIRE(a.stream_names == b.stream_names);
  REQUIRE(a.stream_buffers == b.stream_buffers);
  const Problem &p = a.problem, &q = b.problem;
  REQUIRE(p.batch == q.batch);
  REQUIRE(p.seq_len == q.seq_len);
  REQUIRE(p.heads == q.heads);
  REQUIRE(p.kv_heads == q.kv_heads);
  REQUIRE(p.head_dim == q.head_dim);
  REQUIRE(p.head_dim_v == q.head_dim_v);
  REQUIRE(p.dtype == q.dtype);
  REQUIRE(p.pass == q.pass);
  REQUIRE(p.mask.kind == q.mask.kind);
  REQUIRE(p.mask.window_tokens == q.mask.window_tokens);
  REQUIRE(p.mask.document_lengths == q.mask.document_lengths);
  REQUIRE(a.ops.size() == b.ops.size());
  for (size_t index = 0; index < a.ops.size(); ++index) {
    INFO("op " << index);
    const Op &x = a.ops[index], &y = b.ops[index];
    REQUIRE(x.kind == y.kind);
    REQUIRE(x.pass == y.pass);
    REQUIRE(x.gpu == y.gpu);
    REQUIRE(x.stream == y.stream);
    REQUIRE(x.peer == y.peer);
    if (x.kind == OpKind::compute) {
      auto bx = a.blocks_of(x), by = b.blocks_of(y);
      REQUIRE(std::equal(bx.begin(), bx.end(), by.begin(), by.end()));
    } else if (x.kind != OpKind::collective) {
      auto ix = a.items_of(x), iy = b.items_of(y);
      REQUIRE(std::equal(ix.begin(), ix.end(), iy.begin(), iy.end()));
    }
  }
  REQUIRE(a.collectives.size() == b.collectives.size());
  for (size_t c = 0; c < a.collectives.size(); ++c) {
    const Collective &x = a.collectives[c], &y = b.collectives[c];
    REQUIRE(x.kind == y.kind);
    REQUIRE(x.pass == y.pass);
    REQUIRE(x.members == y.members);
    REQUIRE(x.transfers.size() == y.transfers.size());
    for (size_t t = 0; t < x.transfers.size(); ++t) {
      REQUIRE(x.transfers[t].src == y.transfers[t].src);
      REQUIRE(x.transfers[t].dst == y.transfers[t].dst);
      auto ix = a.items_of(x.transfers[t]), iy = b.items_of(y.transfers[t]);
      REQUIRE(std::equal(ix.begin(), ix.end(), iy.begin(), iy.end()));
    }
  }
}

}  // namespace

// The builder lays out the op list documented above (the tests below index into it).
TEST_CASE("the hand-built schedule has the documented shape", "[schedule]") {
  const Schedule schedule = hand_built();
  REQUIRE(schedule.ops.size() == 14);
  CHECK(schedule.ops[13].kind == OpKind::collective);
  CHECK(schedule.ops[13].peer == 1);
  CHECK(schedule.ops[13].pass == Pass::backward);
  CHECK(schedule.ops[3].kind == OpKind::send);
  CHECK(schedule.ops[3].peer == 1);
  CHECK(schedule.ops[4].kind == OpKind::recv);
  CHECK(schedule.ops[6].kind == OpKind::collective);
  CHECK(schedule.ops[6].gpu == 1);
  CHECK(schedule.ops[8].pass == Pass::backward);
  CHECK(schedule.blocks_of(schedule.ops[0]).size() == 2);
  CHECK(schedule.stream_names == std::vector<std::string>{"compute", "net"});
  CHECK(schedule.stream_buffers == std::vector<int32_t>{0, 2});
  CHECK(schedule.describe(schedule.ops[4]) == "GPU 1 recv KV[0] KV[h1,0] from GPU 0 (op 4, stream net)");
}

// to_json -> from_json gives back the same schedule, and writing it again gives the same JSON.
TEST_CASE("schedule JSON round trip", "[schedule_json]") {
  const Schedule original = hand_built();
  const json first = schedule_to_json(original);
  CHECK(first["format"] == "tessera-schedule");
  CHECK(first["version"] == kScheduleFormatVersion);
  const Schedule back = schedule_from_json(first);
  require_same(original, back);
  CHECK(schedule_to_json(back) == first);
  // Through text as well (what a file holds).
  const Schedule reparsed = schedule_from_json(json::parse(first.dump(2)));
  require_same(original, reparsed);
}

// The typed tile travels with the schedule: readers never parse the free-text variant.
TEST_CASE("the streamed writer writes the document's own text, byte for byte", "[schedule_json]") {
  // The hand-built schedule has every op kind and a collective; a tile moves the key order.
  Schedule schedule = hand_built();
  for (const bool with_tile : {false, true}) {
    if (with_tile) schedule.tile = TileShape{1, 2};
    std::ostringstream streamed;
    write_schedule_json(schedule, streamed);
    CHECK(streamed.str() == json_text(schedule_to_json(schedule)));
  }
}

TEST_CASE("a schedule's tile survives the round trip, and a schedule without one has none", "[schedule_json]") {
  Schedule tiled = hand_built();
  tiled.tile = TileShape{3, 1};
  const json doc = schedule_to_json(tiled);
  CHECK(doc["tile"] == "3x1");
  CHECK(schedule_from_json(doc).tile == TileShape{3, 1});
  const json plain = schedule_to_json(hand_built());
  CHECK_FALSE(plain.contains("tile"));
  CHECK_FALSE(schedule_from_json(plain).tile.has_value());
}

// Each sliding-window problem keeps its window; head_dim_v defaults to head_dim when absent.
TEST_CASE("problem JSON round trip and defaults", "[schedule_json]") {
  Problem problem;
  problem.seq_len = 4096;
  problem.mask.kind = MaskKind::sliding_window;
  problem.mask.window_tokens = 333;
  problem.pass = Pass::backward;
  problem.dtype = DType::fp32;
  const Problem back = problem_from_json(problem_to_json(problem), "problem");
  CHECK(back.mask.kind == MaskKind::sliding_window);
  CHECK(back.mask.window_tokens == 333);
  CHECK(back.pass == Pass::backward);
  CHECK(back.dtype == DType::fp32);
  CHECK(back.seq_len == 4096);
  json without_dv = problem_to_json(problem);
  without_dv["head_dim"] = 96;
  without_dv.erase("head_dim_v");
  CHECK(problem_from_json(without_dv, "problem").head_dim_v == 96);
}

TEST_CASE("schedule files round trip and name the file in errors", "[schedule_json]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tessera_schedule_json_test_" + std::to_string(::getpid()) + ".json"))
          .string();
  const Schedule original = hand_built();
  write_schedule_file(original, path);
  require_same(original, read_schedule_file(path));
  {
    std::ofstream broken(path);
    broken << "{ \"format\": ";
  }
  CHECK_THROWS_WITH(read_schedule_file(path), Catch::StartsWith(path + ":1:13: not valid JSON"));
  std::remove(path.c_str());
  CHECK_THROWS_WITH(read_schedule_file(path), Catch::Contains(path + ": cannot open"));
}

// A name that is not UTF-8 (read from a YAML file, say) must not make writing the file throw:
// the bad bytes are written as U+FFFD and the file reads back.
TEST_CASE("a schedule named with bytes that are not UTF-8 is written and reads back", "[schedule_json]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tessera_schedule_utf8_" + std::to_string(::getpid()) + ".json")).string();
  Schedule original = hand_built();
  original.algorithm = "ring-\xff";
  write_schedule_file(original, path);
  const Schedule back = read_schedule_file(path);
  CHECK(back.algorithm == "ring-\xEF\xBF\xBD");
  CHECK(back.ops.size() == original.ops.size());
  std::remove(path.c_str());
}

// Numbers that no int64 or int32 holds are refused as out of range, never wrapped.
TEST_CASE("schedule JSON numbers past 64 bits, fractions and huge floats are refused", "[schedule_json]") {
  const json valid = schedule_to_json(hand_built());
  json doc = valid;
  doc["ops"][0]["blocks"][0][1] = 18446744073709551615ull;  // would wrap to -1
  CHECK_THROWS_WITH(schedule_from_json(doc), "ops[0].blocks[0][1]: 18446744073709551615 is out of range [0, 2]");
  doc = valid;
  doc["ops"][3]["peer"] = 1.0;
  CHECK_THROWS_WITH(schedule_from_json(doc), "ops[3].peer: expected an integer in [0, 2], got 1.0");
  doc = valid;
  doc["problem"]["heads"] = 1e300;
  CHECK_THROWS_WITH(schedule_from_json(doc), "problem.heads: expected an integer in [1, 1048576], got 1e+300");
  doc = valid;
  doc["gpus"] = int64_t{1} << 32;  // past int32: never truncated to 0
  CHECK_THROWS_WITH(schedule_from_json(doc), "gpus: 4294967296 is out of range [1, 1048576]");
  // The checker keys a head group in 16 bits: more groups than that are refused.
  doc = valid;
  doc["problem"]["heads"] = doc["problem"]["kv_heads"] = 1 << 17;
  doc["head_groups"] = 1 << 17;
  CHECK_THROWS_WITH(schedule_from_json(doc), "head_groups: 131072 is out of range [1, 65536]");
}

// One mutation of the valid JSON per case; each must be a UserError whose message names the
// field (the path into the document) and says what is wrong.
TEST_CASE("malformed schedule JSON is rejected with the field named", "[schedule_json]") {
  json doc = schedule_to_json(hand_built());
  REQUIRE_NOTHROW(schedule_from_json(doc));  // the unmutated document is valid

  SECTION("missing ops") {
    doc.erase("ops");
    REQUIRE_THROWS_AS(schedule_from_json(doc), UserError);
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("missing field 'ops'"));
  }
  SECTION("stream buffers of the wrong length or sign") {
    doc["stream_buffers"] = json::array({0});
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("stream_buffers") && Catch::Contains("one per stream"));
    doc["stream_buffers"] = json::array({0, -1});
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("stream_buffers[1]"));
  }
  SECTION("a tile that is not AxB") {
    doc["tile"] = "8by4";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::StartsWith("tile:") && Catch::Contains("AxB"));
  }
  SECTION("files without stream buffers read as unbounded") {
    doc.erase("stream_buffers");
    CHECK(schedule_from_json(doc).stream_buffers == std::vector<int32_t>{0, 0});
  }
  SECTION("wrong version") {
    doc["version"] = 2;
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::StartsWith("version:") && Catch::Contains("version 2"));
  }
  SECTION("version is not an integer") {
    doc["version"] = "1";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("version: expected an integer"));
  }
  SECTION("wrong format") {
    doc["format"] = "something-else";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("format:"));
  }
  SECTION("not an object") {
    REQUIRE_THROWS_AS(schedule_from_json(json::array()), UserError);
  }
  SECTION("ops[3].peer out of range") {
    doc["ops"][3]["peer"] = 9;
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[3].peer") && Catch::Contains("9 is out of range [0, 2]"));
  }
  SECTION("a send to itself") {
    doc["ops"][3]["peer"] = 0;
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[3].peer") && Catch::Contains("itself"));
  }
  SECTION("unknown data kind") {
    doc["ops"][4]["items"][1][0] = "V";
    REQUIRE_THROWS_WITH(schedule_from_json(doc),
                        Catch::Contains("ops[4].items[1][0]") && Catch::Contains("unknown data kind 'V'"));
  }
  SECTION("item chunk out of range") {
    doc["ops"][7]["items"][0][2] = 3;
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[7].items[0][2]"));
  }
  SECTION("item head group out of range") {
    doc["ops"][8]["items"][0][1] = 2;
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[8].items[0][1]"));
  }
  SECTION("bad dtype") {
    doc["problem"]["dtype"] = "fp8";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("problem.dtype") && Catch::Contains("'fp8'"));
  }
  SECTION("problem fails validation") {
    doc["problem"]["mask"]["document_lengths"] = json::array({5, 6});
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::StartsWith("problem:") && Catch::Contains("sum to 11"));
  }
  SECTION("problem field missing") {
    doc["problem"].erase("heads");
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("problem: missing field 'heads'"));
  }
  SECTION("gpus > seq_len") {
    doc["gpus"] = 13;  // 12 tokens
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::StartsWith("gpus:") && Catch::Contains("13 GPUs but only 12 tokens"));
  }
  SECTION("head groups do not divide the heads") {
    doc["head_groups"] = 3;  // 8 heads
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::StartsWith("head_groups:"));
  }
  SECTION("block outside the grid") {
    doc["ops"][0]["blocks"][1][2] = 3;  // 3 chunks: 0..2
    REQUIRE_THROWS_WITH(schedule_from_json(doc),
                        Catch::Contains("ops[0].blocks[1][2]") && Catch::Contains("3 is out of range [0, 2]"));
  }
  SECTION("block of a head group that does not exist") {
    doc["ops"][10]["blocks"][0][0] = 2;  // 2 head groups: 0..1
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[10].blocks[0][0]"));
  }
  SECTION("a collective op on a non-member") {
    doc["ops"][6]["gpu"] = 2;  // members {0, 1}
    REQUIRE_THROWS_WITH(schedule_from_json(doc),
                        Catch::Contains("ops[6].gpu") && Catch::Contains("GPU 2 is not a member of collective 0"));
  }
  SECTION("a collective op naming a collective that does not exist") {
    doc["ops"][5]["collective"] = 2;
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[5].collective"));
  }
  SECTION("a transfer between non-members") {
    doc["collectives"][0]["transfers"][1]["dst"] = 2;
    REQUIRE_THROWS_WITH(schedule_from_json(doc),
                        Catch::Contains("collectives[0].transfers[1]") && Catch::Contains("members"));
  }
  SECTION("unknown collective kind") {
    doc["collectives"][0]["kind"] = "broadcast";
    REQUIRE_THROWS_WITH(schedule_from_json(doc),
                        Catch::Contains("collectives[0].kind") && Catch::Contains("'broadcast'"));
  }
  SECTION("unknown op kind") {
    doc["ops"][2]["op"] = "sleep";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[2].op") && Catch::Contains("'sleep'"));
  }
  SECTION("an op of both passes") {
    doc["ops"][1]["pass"] = "both";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[1].pass") && Catch::Contains("one pass"));
  }
  SECTION("stream out of range") {
    doc["ops"][1]["stream"] = 2;  // streams: compute, net
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[1].stream"));
  }
  SECTION("empty block list") {
    doc["ops"][1]["blocks"] = json::array();
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::Contains("ops[1].blocks") && Catch::Contains("non-empty"));
  }
  SECTION("bad layout") {
    doc["layout"] = "spiral";
    REQUIRE_THROWS_WITH(schedule_from_json(doc), Catch::StartsWith("layout:") && Catch::Contains("'spiral'"));
  }
}
