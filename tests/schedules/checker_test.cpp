// The schedule checker: valid ring schedules pass; copies broken by hand in one known way are
// rejected with a message that names that violation. Small hand-built schedules cover the
// cases a generator never produces (deadlock, outputs left off their owner, collectives).
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/schedules/schedule_json.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

// N = 35 tokens on 4 GPUs. Contiguous chunk bounds floor(35 c / 4): 0, 8, 17, 26, 35, so the
// chunks hold 8, 9, 9 and 9 tokens.
Problem problem_of(MaskKind mask, Pass pass, int64_t seq_len = 35) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = 8;
  problem.kv_heads = 2;
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.mask.kind = mask;
  problem.pass = pass;
  return problem;
}

Schedule ring(const Problem& problem, int32_t gpus, Layout layout = Layout::contiguous) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = layout;
  return generate_schedule("ring", problem, options);
}

std::string violation_of(const Schedule& schedule) {
  BlockGrid grid(schedule.problem, schedule.layout, schedule.gpus);
  return check_schedule(schedule, grid).violation;
}

// Indices of the ops that satisfy `match`, in program order.
std::vector<size_t> find_ops(const Schedule& schedule, const std::function<bool(const Op&)>& match) {
  std::vector<size_t> found;
  for (size_t index = 0; index < schedule.ops.size(); ++index)
    if (match(schedule.ops[index])) found.push_back(index);
  return found;
}

size_t compute_op(const Schedule& schedule, int32_t gpu, Pass pass, int32_t q, int32_t kv) {
  auto found = find_ops(schedule, [&](const Op& op) {
    return op.kind == OpKind::compute && op.gpu == gpu && op.pass == pass && op.count == 1 &&
           schedule.blocks[op.first] == BlockRef{0, q, kv};
  });
  REQUIRE(found.size() == 1);
  return found.front();
}

// Send or recv ops of `gpu` with peer `peer` whose first item is `item`.
std::vector<size_t> transfer_ops(const Schedule& schedule, OpKind kind, int32_t gpu, int32_t peer, DataItem item) {
  return find_ops(schedule, [&](const Op& op) {
    return op.kind == kind && op.gpu == gpu && op.peer == peer && op.count >= 1 && schedule.items[op.first] == item;
  });
}

void append_compute(Schedule& schedule, int32_t gpu, Pass pass, BlockRef block) {
  Op op;
  op.kind = OpKind::compute;
  op.pass = pass;
  op.gpu = gpu;
  op.stream = 0;
  op.first = static_cast<uint32_t>(schedule.blocks.size());
  op.count = 1;
  schedule.blocks.push_back(block);
  schedule.ops.push_back(op);
}

void append_transfer(Schedule& schedule, OpKind kind, int32_t gpu, int32_t stream, int32_t peer, DataItem item) {
  Op op;
  op.kind = kind;
  op.pass = Pass::forward;
  op.gpu = gpu;
  op.stream = stream;
  op.peer = peer;
  op.first = static_cast<uint32_t>(schedule.items.size());
  op.count = 1;
  schedule.items.push_back(item);
  schedule.ops.push_back(op);
}

constexpr DataItem KV(int32_t chunk) { return DataItem{DataKind::KV, 0, chunk}; }

}  // namespace

// Ring schedules from the generator are valid for every mask, layout, pass and a few P.
TEST_CASE("ring schedules pass the checker", "[checker]") {
  for (int32_t gpus : {1, 2, 3, 4}) {
    for (MaskKind mask : {MaskKind::full, MaskKind::causal}) {
      for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped}) {
        for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) {
          INFO("P=" << gpus << " mask=" << to_string(mask) << " layout=" << to_string(layout)
                    << " pass=" << to_string(pass));
          CHECK(violation_of(ring(problem_of(mask, pass), gpus, layout)) == "");
        }
      }
    }
  }
}

// Ring schedules survive the JSON round trip op for op, and the copy still passes.
TEST_CASE("ring schedules round-trip through JSON", "[checker][schedule_json]") {
  for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) {
    for (Layout layout : {Layout::contiguous, Layout::zigzag}) {
      INFO("pass=" << to_string(pass) << " layout=" << to_string(layout));
      const Schedule original = ring(problem_of(MaskKind::causal, pass), 4, layout);
      const nlohmann::json json = schedule_to_json(original);
      const Schedule back = schedule_from_json(json);
      REQUIRE(back.algorithm == "ring");
      REQUIRE(back.layout == layout);
      REQUIRE(back.gpus == 4);
      REQUIRE(back.stream_names == original.stream_names);
      REQUIRE(back.ops.size() == original.ops.size());
      for (size_t index = 0; index < original.ops.size(); ++index) {
        INFO("op " << index);
        const Op &x = original.ops[index], &y = back.ops[index];
        REQUIRE((x.kind == y.kind && x.pass == y.pass && x.gpu == y.gpu && x.stream == y.stream && x.peer == y.peer));
        auto bx = original.blocks_of(x), by = back.blocks_of(y);
        if (x.kind == OpKind::compute) REQUIRE(std::equal(bx.begin(), bx.end(), by.begin(), by.end()));
        auto ix = original.items_of(x), iy = back.items_of(y);
        if (x.kind != OpKind::compute) REQUIRE(std::equal(ix.begin(), ix.end(), iy.begin(), iy.end()));
      }
      REQUIRE(back.collectives.empty());
      REQUIRE(schedule_to_json(back) == json);
      REQUIRE(violation_of(back) == "");
    }
  }
}

// The grid must have one chunk per GPU of the schedule.
TEST_CASE("a grid of the wrong size is rejected", "[checker]") {
  const Schedule schedule = ring(problem_of(MaskKind::causal, Pass::forward), 4);
  BlockGrid grid(schedule.problem, schedule.layout, 2);
  CHECK_THAT(check_schedule(schedule, grid).violation, Catch::Contains("2 chunks but the schedule 4"));
}

// Forward ring, causal, contiguous, P = 4. GPU p computes (p, p) and then, at step s, receives
// KV[p-s] from GPU p-1 and computes (p, p-s) when p-s >= 0 (the wrapped blocks are masked).
// Each case breaks one thing.
TEST_CASE("broken forward ring schedules are rejected", "[checker]") {
  Schedule schedule = ring(problem_of(MaskKind::causal, Pass::forward), 4);
  REQUIRE(violation_of(schedule) == "");
  const int32_t kv_send = 1, kv_recv = 2;
  REQUIRE(schedule.stream_names[kv_send] == "kv_send");
  REQUIRE(schedule.stream_names[kv_recv] == "kv_recv");

  SECTION("a missing block") {
    // Block (2,1): queries [17,26) all after keys [8,17): 9 x 9 = 81 pairs.
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(compute_op(schedule, 2, Pass::forward, 2, 1)));
    CHECK_THAT(violation_of(schedule), Catch::Contains("block (2,1) forward (81 pairs per head) is never computed"));
  }
  SECTION("a block removed from a compute op") {
    schedule.ops[compute_op(schedule, 3, Pass::forward, 3, 0)].count = 0;
    // Queries [26,35) after keys [0,8): 9 x 8 = 72 pairs.
    CHECK_THAT(violation_of(schedule), Catch::Contains("block (3,0) forward (72 pairs per head) is never computed"));
  }
  SECTION("a duplicated block on another GPU") {
    // GPU 2 gets Q[1] from GPU 1 and recomputes block (1,0) (it holds KV[0] after step 2).
    // The extra transfer alone is harmless; the second compute is the violation.
    append_transfer(schedule, OpKind::send, 1, kv_send, 2, DataItem{DataKind::Q, 0, 1});
    append_transfer(schedule, OpKind::recv, 2, kv_recv, 1, DataItem{DataKind::Q, 0, 1});
    REQUIRE(violation_of(schedule) == "");
    append_compute(schedule, 2, Pass::forward, BlockRef{0, 1, 0});
    const std::string violation = violation_of(schedule);
    CHECK_THAT(violation, Catch::Contains("block (1,0) forward is computed twice"));
    CHECK_THAT(violation, Catch::Contains("GPU 1 compute-forward (1,0)"));
    CHECK_THAT(violation, Catch::Contains("GPU 2 compute-forward (1,0)"));
  }
  SECTION("a fully masked block") {
    // Queries [0,8) all before keys [26,35): no pair; GPU 0 holds KV[3] after step 1.
    BlockGrid grid(schedule.problem, schedule.layout, 4);
    REQUIRE(grid.pairs(0, 3) == 0);
    append_compute(schedule, 0, Pass::forward, BlockRef{0, 0, 3});
    CHECK_THAT(violation_of(schedule), Catch::Contains("computes block (0,3), which is fully masked"));
  }
  SECTION("an unmatched send") {
    // GPU 1 receives KV[0], KV[3], KV[2] from GPU 0; drop the last recv: the third send has
    // no partner (dropping an earlier one would shift the pairing instead).
    auto recvs = transfer_ops(schedule, OpKind::recv, 1, 0, KV(2));
    REQUIRE(recvs.size() == 1);
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(recvs.front()));
    CHECK_THAT(violation_of(schedule),
               Catch::Contains("unmatched send: GPU 0 send KV[2] to GPU 1") &&
                   Catch::Contains("has no matching recv on GPU 1 from GPU 0"));
  }
  SECTION("an unmatched recv") {
    auto sends = transfer_ops(schedule, OpKind::send, 0, 1, KV(2));
    REQUIRE(sends.size() == 1);
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(sends.front()));
    CHECK_THAT(violation_of(schedule), Catch::Contains("unmatched recv: GPU 1 recv KV[2] from GPU 0"));
  }
  SECTION("mismatched items") {
    auto recvs = transfer_ops(schedule, OpKind::recv, 1, 0, KV(0));
    REQUIRE(recvs.size() == 1);
    schedule.items[schedule.ops[recvs.front()].first] = KV(2);
    CHECK_THAT(violation_of(schedule), Catch::Contains("mismatched transfer: GPU 1 recv KV[2] from GPU 0") &&
                                           Catch::Contains("carries different data (KV[0])"));
  }
  SECTION("a dropped first recv shifts the pairing") {
    auto recvs = transfer_ops(schedule, OpKind::recv, 1, 0, KV(0));
    REQUIRE(recvs.size() == 1);
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(recvs.front()));
    CHECK_THAT(violation_of(schedule), Catch::Contains("mismatched transfer"));
  }
  SECTION("a compute moved before the recv of its KV") {
    const size_t recv = transfer_ops(schedule, OpKind::recv, 1, 0, KV(0)).at(0);
    const size_t compute = compute_op(schedule, 1, Pass::forward, 1, 0);
    REQUIRE(compute > recv);
    std::rotate(schedule.ops.begin() + static_cast<long>(recv), schedule.ops.begin() + static_cast<long>(compute),
                schedule.ops.begin() + static_cast<long>(compute) + 1);
    CHECK_THAT(violation_of(schedule), Catch::Contains("data not present: GPU 1 compute-forward (1,0)") &&
                                           Catch::Contains("reads KV[0], which is not GPU 1's own chunk"));
  }
  SECTION("a compute reading another GPU's queries") {
    schedule.blocks[schedule.ops[compute_op(schedule, 1, Pass::forward, 1, 1)].first] = BlockRef{0, 2, 1};
    CHECK_THAT(violation_of(schedule), Catch::Contains("data not present") && Catch::Contains("reads Q[2]"));
  }
}

// Full mask: GPU 1's first block (1,1) changed to (1,2) reads KV[2] before it arrives (step 3).
TEST_CASE("a block changed to a KV chunk not yet received is rejected", "[checker]") {
  Schedule schedule = ring(problem_of(MaskKind::full, Pass::forward), 4);
  REQUIRE(violation_of(schedule) == "");
  schedule.blocks[schedule.ops[compute_op(schedule, 1, Pass::forward, 1, 1)].first] = BlockRef{0, 1, 2};
  CHECK_THAT(violation_of(schedule), Catch::Contains("data not present") && Catch::Contains("reads KV[2]"));
}

// Backward ring, causal, contiguous, P = 4: dK/dV partials travel one step behind their KV,
// from the first GPU after the owner, and come home.
TEST_CASE("broken backward ring schedules are rejected", "[checker]") {
  Schedule schedule = ring(problem_of(MaskKind::causal, Pass::backward), 4);
  REQUIRE(violation_of(schedule) == "");

  SECTION("a forward compute op in a backward-only problem") {
    append_compute(schedule, 0, Pass::forward, BlockRef{0, 0, 0});
    CHECK_THAT(violation_of(schedule), Catch::Contains("computes a forward block, but the problem's pass is backward"));
  }
  SECTION("a missing backward block") {
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(compute_op(schedule, 3, Pass::backward, 3, 0)));
    CHECK_THAT(violation_of(schedule), Catch::Contains("block (3,0) backward (72 pairs per head) is never computed"));
  }
  SECTION("a received partial never merged") {
    // The last merge on GPU 2 folds in its own dKV[2], just brought home by the last hop.
    auto merges = find_ops(schedule, [&](const Op& op) {
      return op.kind == OpKind::merge && op.gpu == 2 && schedule.items[op.first] == DataItem{DataKind::dKV, 0, 2};
    });
    REQUIRE(merges.size() == 1);
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(merges.front()));
    CHECK_THAT(violation_of(schedule), Catch::Contains("GPU 2 received the partial dKV[2] but never merged it"));
  }
  SECTION("a partial sent before anything produced it") {
    // GPU 1 keeps its own dKV[1] and starts the partial of dKV[0], with block (1,0); drop it.
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(compute_op(schedule, 1, Pass::backward, 1, 0)));
    CHECK_THAT(violation_of(schedule), Catch::Contains("data not present") &&
                                           Catch::Contains("sends the partial dKV[0], but nothing on GPU 1 computed"));
  }
  SECTION("a backward problem without its backward blocks") {
    // Keep only the diagonal blocks: the partials they should start are the first casualty.
    const auto& blocks = std::as_const(schedule).blocks;
    schedule.ops.edit([&](std::vector<Op>& ops) {
      std::erase_if(ops, [&](const Op& op) {
        return op.kind == OpKind::compute && blocks[op.first].q_chunk != blocks[op.first].kv_chunk;
      });
    });
    CHECK_THAT(violation_of(schedule), Catch::Contains("data not present") && Catch::Contains("dKV[0]"));
  }
}

// P = 1: one GPU computes the single block; N = 35 causal has 35*36/2 = 630 pairs.
TEST_CASE("single-GPU schedules", "[checker]") {
  for (Pass pass : {Pass::forward, Pass::backward, Pass::both})
    for (MaskKind mask : {MaskKind::full, MaskKind::causal}) {
      INFO("pass=" << to_string(pass) << " mask=" << to_string(mask));
      CHECK(violation_of(ring(problem_of(mask, pass), 1)) == "");
    }
  Schedule schedule = ring(problem_of(MaskKind::causal, Pass::forward), 1);
  REQUIRE(schedule.ops.size() == 1);
  schedule.ops.clear();
  CHECK_THAT(violation_of(schedule), Catch::Contains("block (0,0) forward (630 pairs per head) is never computed"));
}

// Two GPUs, one stream each, full mask. Each receives the other's KV and sends its own.
//  recv-then-send on both: each recv waits for a send that sits behind the other's recv ->
//  deadlock. Control: GPU 1 sends first -> valid.
TEST_CASE("a cyclic wait is a deadlock", "[checker]") {
  const Problem problem = problem_of(MaskKind::full, Pass::forward, 8);
  auto build = [&](bool gpu1_sends_first) {
    ScheduleBuilder builder("hand", "", problem, Layout::contiguous, 2);
    for (int32_t gpu : {0, 1}) {
      const int32_t other = 1 - gpu;
      if (gpu == 1 && gpu1_sends_first) builder.send(gpu, 0, other, {KV(gpu)});
      builder.recv(gpu, 0, other, {KV(other)});
      if (!(gpu == 1 && gpu1_sends_first)) builder.send(gpu, 0, other, {KV(gpu)});
      builder.compute(gpu, Pass::forward, BlockRef{0, gpu, gpu});
      builder.compute(gpu, Pass::forward, BlockRef{0, gpu, other});
    }
    return builder.finish();
  };
  CHECK(violation_of(build(true)) == "");
  const std::string violation = violation_of(build(false));
  CHECK_THAT(violation, Catch::StartsWith("deadlock"));
  CHECK_THAT(violation, Catch::Contains("can never run"));
  CHECK_THAT(violation, Catch::Contains("(a cycle)"));
}

// Two GPUs, full mask, N = 8. GPU 1 computes its row (1,0), (1,1) and also block (0,1) with
// Q[0] and KV[0] sent by GPU 0, so O[0] and LSE[0] have a partial (1 of 2 blocks) on GPU 1.
TEST_CASE("outputs must end complete on their owner", "[checker]") {
  const Problem problem = problem_of(MaskKind::full, Pass::forward, 8);
  enum class Return { nothing, unmerged, merged };
  auto build = [&](Return home) {
    ScheduleBuilder builder("hand", "", problem, Layout::contiguous, 2);
    const int32_t net = builder.stream("net");
    builder.compute(0, Pass::forward, BlockRef{0, 0, 0});
    builder.send(0, net, 1, {DataItem{DataKind::Q, 0, 0}});
    builder.send(0, net, 1, {KV(0)});
    builder.recv(1, net, 0, {DataItem{DataKind::Q, 0, 0}});
    builder.recv(1, net, 0, {KV(0)});
    const BlockRef blocks[] = {{0, 1, 1}, {0, 1, 0}, {0, 0, 1}};
    builder.compute(1, Pass::forward, blocks);
    if (home != Return::nothing) {
      builder.send(1, net, 0, {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}});
      builder.recv(0, net, 1, {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}});
    }
    if (home == Return::merged) builder.merge(0, 0, {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}});
    return builder.finish();
  };
  CHECK(violation_of(build(Return::merged)) == "");
  CHECK_THAT(violation_of(build(Return::unmerged)), Catch::Contains("GPU 0 received the partial O[0] but never merged it"));
  CHECK_THAT(violation_of(build(Return::nothing)),
             Catch::Contains("output O[0] on its owner GPU 0 covers 1 of its 2 blocks") &&
                 Catch::Contains("left on GPU 1"));
}

// Collectives: two GPUs all-gather KV (0 -> 1 KV[0], 1 -> 0 KV[1]) and then compute their
// rows. Valid as built; a member that never joins, or one that joins twice, is rejected.
TEST_CASE("collectives must be joined once by every member", "[checker]") {
  const Problem problem = problem_of(MaskKind::full, Pass::forward, 8);
  ScheduleBuilder builder("hand", "", problem, Layout::contiguous, 2);
  const int32_t net = builder.stream("net");
  const int32_t gather = builder.begin_collective(CollectiveKind::all_gather, Pass::forward, {0, 1});
  const DataItem kv0[] = {KV(0)}, kv1[] = {KV(1)};
  builder.add_transfer(gather, 0, 1, kv0);
  builder.add_transfer(gather, 1, 0, kv1);
  for (int32_t gpu : {0, 1}) {
    builder.collective_op(gpu, net, gather);
    const BlockRef row[] = {{0, gpu, 0}, {0, gpu, 1}};
    builder.compute(gpu, Pass::forward, row);
  }
  Schedule schedule = builder.finish();
  REQUIRE(violation_of(schedule) == "");
  auto gpu1_joins = find_ops(schedule, [](const Op& op) { return op.kind == OpKind::collective && op.gpu == 1; });
  REQUIRE(gpu1_joins.size() == 1);

  SECTION("a member never joins") {
    schedule.ops.erase(schedule.ops.begin() + static_cast<long>(gpu1_joins.front()));
    CHECK_THAT(violation_of(schedule), Catch::Contains("all-gather #0 has no op on member GPU 1"));
  }
  SECTION("a member joins twice") {
    schedule.ops[gpu1_joins.front()].gpu = 0;
    CHECK_THAT(violation_of(schedule), Catch::Contains("GPU 0 joins the same collective twice"));
  }
  SECTION("a transfer to a GPU the schedule does not have") {
    schedule.collectives.edit([](std::vector<Collective>& collectives) { collectives.front().transfers.back().dst = 2; });
    CHECK_THAT(violation_of(schedule), Catch::Contains("collective 0: a transfer's GPU 2 does not exist"));
  }
  SECTION("a transfer whose items lie past the schedule's") {
    schedule.collectives.edit([](std::vector<Collective>& collectives) { collectives.front().transfers.back().item_count = 1000; });
    CHECK_THAT(violation_of(schedule), Catch::Contains("collective 0: a transfer's items are out of range"));
  }
  SECTION("computing before the gather delivers the KV") {
    // Move GPU 1's join after its compute: (1,0) then reads KV[0] before it arrives.
    auto computes = find_ops(schedule, [](const Op& op) { return op.kind == OpKind::compute && op.gpu == 1; });
    REQUIRE(computes.size() == 1);
    std::swap(schedule.ops[gpu1_joins.front()], schedule.ops[computes.front()]);
    CHECK_THAT(violation_of(schedule), Catch::Contains("data not present") && Catch::Contains("reads KV[0]"));
  }
}

// A reduce-scatter moves each partial to its owner. Two GPUs, full mask, N = 8: both gather Q
// and KV, GPU g computes column g, blocks (0, g) and (1, g), so it holds O[0] and O[1] (with
// their LSE) over 1 of their 2 blocks each; the reduce-scatter sends GPU 0's O[1] to GPU 1 and
// GPU 1's O[0] to GPU 0, and each merges, ending with 2 of 2. Worked by hand: without GPU 1's
// transfer (and GPU 0's merge, which would have nothing to read), O[0] covers 1 block on its
// owner and 1 is left on GPU 1; a transfer repeated finds its partial gone and moves zeros (a
// collective's fixed-shape buffers), so nothing changes; GPU 0 sending its own O[0] to GPU 1 as
// well leaves that partial in GPU 1's inbox, where no merge takes it.
TEST_CASE("a reduce-scatter carries each partial to its owner", "[checker]") {
  const Problem problem = problem_of(MaskKind::full, Pass::forward, 8);
  enum class Variant { valid, gpu1_missing, gpu1_repeated, gpu0_sends_own };
  auto build = [&](Variant variant) {
    ScheduleBuilder builder("hand", "", problem, Layout::contiguous, 2);
    const int32_t net = builder.stream("net");
    const int32_t gather = builder.begin_collective(CollectiveKind::all_gather, Pass::forward, {0, 1});
    for (int32_t gpu : {0, 1}) {
      const DataItem own[] = {DataItem{DataKind::Q, 0, gpu}, KV(gpu)};
      builder.add_transfer(gather, gpu, 1 - gpu, own);
    }
    const int32_t scatter = builder.begin_collective(CollectiveKind::reduce_scatter, Pass::forward, {0, 1});
    auto partial = [](int32_t chunk) {
      return std::vector<DataItem>{DataItem{DataKind::O, 0, chunk}, DataItem{DataKind::LSE, 0, chunk}};
    };
    builder.add_transfer(scatter, 0, 1, partial(1));
    if (variant != Variant::gpu1_missing) builder.add_transfer(scatter, 1, 0, partial(0));
    if (variant == Variant::gpu1_repeated) builder.add_transfer(scatter, 1, 0, partial(0));
    if (variant == Variant::gpu0_sends_own) builder.add_transfer(scatter, 0, 1, partial(0));
    for (int32_t gpu : {0, 1}) {
      builder.collective_op(gpu, net, gather);
      const BlockRef column[] = {{0, 0, gpu}, {0, 1, gpu}};
      builder.compute(gpu, Pass::forward, column);
      builder.collective_op(gpu, net, scatter);
      if (!(gpu == 0 && variant == Variant::gpu1_missing)) builder.merge(gpu, 0, partial(gpu));
    }
    return builder.finish();
  };
  CHECK(violation_of(build(Variant::valid)) == "");
  CHECK(violation_of(build(Variant::gpu1_repeated)) == "");
  CHECK_THAT(violation_of(build(Variant::gpu1_missing)),
             Catch::Contains("output O[0] on its owner GPU 0 covers 1 of its 2 blocks") &&
                 Catch::Contains("a partial covering 1 blocks was left on GPU 1"));
  CHECK_THAT(violation_of(build(Variant::gpu0_sends_own)), Catch::Contains("GPU 1 received the partial O[0] but never merged it"));
}

// A merge empties the inbox it reads, so a receive of the same partial after it in program order
// must wait for it, even on another stream. GPU 0 receives partials of O[0] from GPUs 1 and 2 on
// streams a and b, merging each on stream m: the second receive depends on the first merge.
TEST_CASE("a receive waits for the earlier merge of the same inbox", "[checker]") {
  const Problem problem = problem_of(MaskKind::full, Pass::forward, 12);
  ScheduleBuilder builder("hand", "", problem, Layout::contiguous, 3);
  const int32_t net = builder.stream("net"), a = builder.stream("a"), b = builder.stream("b"), m = builder.stream("m");
  const DataItem q0{DataKind::Q, 0, 0};
  const DataItem partial[] = {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}};
  builder.compute(0, Pass::forward, BlockRef{0, 0, 0});
  for (int32_t gpu : {1, 2}) {
    builder.send(0, net, gpu, {q0});
    builder.recv(gpu, net, 0, {q0});
    builder.compute(gpu, Pass::forward, BlockRef{0, 0, gpu});
    builder.send(gpu, net, 0, partial);
  }
  builder.recv(0, a, 1, partial);
  const auto first_merge = static_cast<uint32_t>(builder.op_count());
  builder.merge(0, m, partial);
  const auto second_recv = static_cast<uint32_t>(builder.op_count());
  builder.recv(0, b, 2, partial);
  builder.merge(0, m, partial);
  const Schedule schedule = builder.finish();
  BlockGrid grid(schedule.problem, schedule.layout, schedule.gpus);
  const CheckResult result = check_schedule(schedule, grid);
  // Rows 1 and 2 are never computed, which the checker reports; the dependencies come first.
  CHECK_THAT(result.violation, Catch::Contains("is never computed"));
  REQUIRE(result.analysis.dep_offsets.size() == schedule.ops.size() + 1);
  const auto deps = result.analysis.deps_of(second_recv);
  CHECK(std::find(deps.begin(), deps.end(), first_merge) != deps.end());
}

// Ring pass-KV forward, full mask, P = 4, on GPU 0: receive k brings KV[4 - k - 1] for step
// k + 1. With two buffers, receive 2 must wait until the chunk of receive 0 (KV[3], used at
// step 1) is computed with and passed on; receive 1 waits for no compute. With three buffers,
// receive 2 waits for nothing either, and with one the ring deadlocks.
TEST_CASE("a receive waits for a free buffer", "[checker][buffers]") {
  for (int32_t buffers : {1, 2, 3}) {
    GeneratorOptions options;
    options.gpus = 4;
    options.layout = Layout::contiguous;
    options.buffers = buffers;
    const Schedule schedule = generate_schedule("ring", problem_of(MaskKind::full, Pass::forward, 64), options);
    BlockGrid grid(schedule.problem, schedule.layout, schedule.gpus);
    const CheckResult result = check_schedule(schedule, grid);
    if (buffers == 1) {
      CHECK_THAT(result.violation, Catch::Contains("deadlock") && Catch::Contains("kv_recv has 1"));
      continue;
    }
    REQUIRE(result.ok());
    const auto receives = find_ops(schedule, [](const Op& op) { return op.gpu == 0 && op.kind == OpKind::recv; });
    REQUIRE(receives.size() == 3);
    const auto step1_compute = find_ops(schedule, [&](const Op& op) {
      return op.gpu == 0 && op.kind == OpKind::compute && schedule.blocks_of(op)[0] == BlockRef{0, 0, 3};
    });
    const auto step1_send = find_ops(schedule, [&](const Op& op) {
      return op.gpu == 0 && op.kind == OpKind::send && schedule.items_of(op)[0] == DataItem{DataKind::KV, 0, 3};
    });
    REQUIRE(step1_compute.size() == 1);
    REQUIRE(step1_send.size() == 1);
    auto waits_for = [&](size_t op, size_t dep) {
      const auto deps = result.analysis.deps_of(op);
      return std::find(deps.begin(), deps.end(), static_cast<uint32_t>(dep)) != deps.end();
    };
    CHECK(waits_for(receives[2], step1_compute[0]) == (buffers == 2));
    CHECK(waits_for(receives[2], step1_send[0]) == (buffers == 2));
    CHECK_FALSE(waits_for(receives[1], step1_compute[0]));
    // What frees receive 0's buffer: that compute and that send.
    const BufferReleases freeing = buffer_releases(schedule);
    const auto releases = freeing.of(receives[0]);
    CHECK(std::set<uint32_t>(releases.begin(), releases.end()) ==
          std::set<uint32_t>{static_cast<uint32_t>(step1_compute[0]), static_cast<uint32_t>(step1_send[0])});
  }
}

// The rule itself, on schedules whose GPUs receive on several bounded streams in turn: the k-th
// receive of a GPU on a stream of B buffers waits for every op that frees the (k-B)-th
// (buffer_releases), whatever the other streams received in between. The dependencies take the
// buffer edges in op order; edges made stream by stream and not merged into that order would
// be dropped here.
TEST_CASE("a receive waits for every release of the receive B earlier on its stream, streams interleaved", "[checker][buffers]") {
  struct Case {
    std::string algorithm;
    int32_t gpus;
  };
  for (const Case& c : {Case{"ring", 4}, Case{"ring", 8}, Case{"mesh", 8}, Case{"mesh", 16}}) {
    CAPTURE(c.algorithm, c.gpus);
    GeneratorOptions options;
    options.gpus = c.gpus;
    options.layout = Layout::contiguous;
    options.buffers = 2;
    const CheckedSchedule checked = generate_checked(c.algorithm, problem_of(MaskKind::causal, Pass::both, 96), options);
    const Schedule& schedule = checked.schedule();
    const BufferReleases freeing = buffer_releases(schedule);
    size_t expected = 0, missing = 0, interleaved = 0;
    for (int32_t gpu = 0; gpu < schedule.gpus; ++gpu) {
      std::vector<std::vector<size_t>> on_stream(schedule.stream_names.size());
      int32_t last_waiting_stream = -1;
      bool out_of_stream_order = false;
      for (size_t index = 0; index < schedule.ops.size(); ++index) {
        const Op& op = schedule.ops[index];
        if (op.gpu != gpu || op.kind != OpKind::recv) continue;
        auto& earlier = on_stream[static_cast<size_t>(op.stream)];
        const auto buffers = static_cast<size_t>(schedule.buffers_of_stream(op.stream));
        if (buffers > 0 && earlier.size() >= buffers) {
          const auto releases = freeing.of(earlier[earlier.size() - buffers]);
          const auto deps = checked.analysis().deps_of(index);
          for (uint32_t release : releases) {
            ++expected;
            missing += std::find(deps.begin(), deps.end(), release) != deps.end() ? 0 : 1;
          }
          if (!releases.empty()) {
            out_of_stream_order = out_of_stream_order || op.stream < last_waiting_stream;
            last_waiting_stream = std::max(last_waiting_stream, op.stream);
          }
        }
        earlier.push_back(index);
      }
      interleaved += out_of_stream_order ? 1 : 0;
    }
    CHECK(expected > 0);
    CHECK(missing == 0);
    // A ring of 8: after its first two dKV receives, a GPU's backward receives alternate KV and
    // dKV, both waiting, so the waiting receives come in turn (on 4 GPUs the third dKV is last).
    if (c.algorithm == "ring" && c.gpus == 8) CHECK(interleaved > 0);
  }
}

// check() on a grid made beforehand: reused only when it is the schedule's own (same problem,
// layout and chunks); any other grid is replaced by one built for the schedule.
TEST_CASE("check reuses a grid only when it is the schedule's", "[checker]") {
  const Problem problem = problem_of(MaskKind::causal, Pass::forward);
  auto own = std::make_shared<const BlockGrid>(problem, Layout::contiguous, 4);
  CHECK(check(ring(problem, 4), own).shared_grid() == own);

  auto other_layout = std::make_shared<const BlockGrid>(problem, Layout::zigzag, 4);
  const CheckedSchedule relaid = check(ring(problem, 4), other_layout);
  CHECK(relaid.shared_grid() != other_layout);
  CHECK(relaid.grid().layout() == Layout::contiguous);

  Problem longer = problem;
  longer.seq_len = 36;
  auto other_problem = std::make_shared<const BlockGrid>(longer, Layout::contiguous, 4);
  const CheckedSchedule rebuilt = check(ring(problem, 4), other_problem);
  CHECK(rebuilt.shared_grid() != other_problem);
  CHECK(rebuilt.grid().problem().seq_len == 35);
  // Causal, contiguous chunks of 8, 9, 9, 9 tokens: 35 * 36 / 2 pairs in all.
  CHECK(rebuilt.grid().total_pairs() == 35 * 36 / 2);

  Problem batched = problem;
  batched.batch = 2;
  auto other_batch = std::make_shared<const BlockGrid>(batched, Layout::contiguous, 4);
  CHECK(check(ring(problem, 4), other_batch).grid().problem().batch == 1);
}

TEST_CASE("the execution order runs every op after its dependencies, a send right before its recv", "[checker]") {
  // find_execution_order walks each GPU's streams in program order, with no list of successors:
  // held against the definition of an execution order, and reverse_dependencies against the
  // dependencies it reverses (each edge once, the other way).
  struct Case {
    std::string algorithm;
    int32_t gpus;
    int32_t buffers;
  };
  for (const Case& c : {Case{"ring", 4, 2}, Case{"ring", 5, 0}, Case{"mesh", 8, 2}, Case{"attention2d", 4, 2},
                        Case{"ulysses", 4, 2}, Case{"usp", 8, 2}}) {
    CAPTURE(c.algorithm, c.gpus, c.buffers);
    GeneratorOptions options;
    options.gpus = c.gpus;
    options.buffers = c.buffers;
    const CheckedSchedule checked = generate_checked(c.algorithm, problem_of(MaskKind::causal, Pass::both, 64), options);
    const Schedule& schedule = checked.schedule();
    const ScheduleAnalysis& analysis = checked.analysis();
    const std::vector<uint32_t> order = execution_order(schedule, analysis);
    REQUIRE(order.size() == schedule.ops.size());
    std::vector<size_t> position(schedule.ops.size(), schedule.ops.size());
    for (size_t at = 0; at < order.size(); ++at) position[order[at]] = at;
    size_t late = 0, apart = 0, scattered = 0, edges = 0;
    for (size_t index = 0; index < schedule.ops.size(); ++index) {
      REQUIRE(position[index] < schedule.ops.size());  // a permutation
      for (uint32_t dep : analysis.deps_of(index)) late += position[dep] < position[index] ? 0 : 1;
      edges += analysis.deps_of(index).size();
      if (schedule.ops[index].kind == OpKind::send)
        apart += position[static_cast<size_t>(analysis.partner[index])] == position[index] + 1 ? 0 : 1;
    }
    for (const auto& members : analysis.collective_ops) {
      std::vector<size_t> places;
      for (uint32_t member : members) places.push_back(position[member]);
      std::sort(places.begin(), places.end());
      scattered += places.empty() || places.back() - places.front() == places.size() - 1 ? 0 : 1;
    }
    CHECK(late == 0);
    CHECK(apart == 0);
    CHECK(scattered == 0);
    const Successors successors = reverse_dependencies(analysis);
    size_t missing = 0, listed = 0;
    for (size_t index = 0; index < schedule.ops.size(); ++index) {
      listed += successors.of(index).size();
      for (uint32_t dep : analysis.deps_of(index)) {
        const auto waiting = successors.of(dep);
        missing += std::count(waiting.begin(), waiting.end(), static_cast<uint32_t>(index)) == 1 ? 0 : 1;
      }
    }
    CHECK(edges > 0);
    CHECK(listed == edges);
    CHECK(missing == 0);
  }
}
