// Per-link bytes and inter-server bytes of placed schedules, against hand counts.
#include "tessera/topologies/link_loads.hpp"

#include <catch2/catch.hpp>
#include <numeric>

#include "tessera/core/data_size.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/placement.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::topo;

namespace {

// Chunks of 1024 tokens; 32 query heads, 8 KV heads, d = 128, bf16, full mask, forward:
//   Q = O = 1024 * 32 * 128 * 2 = 8388608 B, KV = 1024 * 8 * (128 + 128) * 2 = 4194304 B,
//   LSE = 1024 * 32 * 4 = 131072 B.
constexpr int64_t kQBytes = 8388608, kKVBytes = 4194304, kOBytes = 8388608, kLSEBytes = 131072;

Problem forward_problem(int32_t gpus) {
  Problem problem;
  problem.seq_len = 1024 * gpus;
  problem.heads = 32;
  problem.kv_heads = 8;
  problem.head_dim = 128;
  problem.head_dim_v = 128;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  return problem;
}

int64_t kind_bytes(const LinkLoads& loads, DataKind kind) { return loads.inter_node_bytes[static_cast<size_t>(kind)]; }

int32_t edge_between(const Topology& topology, int32_t src_gpu, int32_t dst_gpu) {
  for (int32_t link = 0; link < topology.link_count(); ++link) {
    if (topology.link_source(link) == topology.gpu_vertex(src_gpu) &&
        topology.link_target(link) == topology.gpu_vertex(dst_gpu))
      return link;
  }
  return -1;
}

}  // namespace

TEST_CASE("topo::compute_link_loads: a ring schedule on a ring puts every transfer on one link", "[link_loads]") {
  // Ring-Attention forward on 8 GPUs: GPU p sends a KV chunk to p + 1 at each of 7 steps, so
  // link p -> p+1 carries 7 x 4194304 = 29360128 B and link p+1 -> p carries nothing.
  GeneratorOptions options;
  options.gpus = 8;
  const CheckedSchedule checked = generate_checked("ring", forward_problem(8), options);
  const Schedule& schedule = checked.schedule();
  const BlockGrid& grid = checked.grid();
  Topology ring = build_ring(8, 50e9, 1e-6, true);
  Router router(ring);
  std::vector<int32_t> placement = place_ranks(ring, checked, "linear");

  int64_t sent_bytes = 0;
  for (const Op& op : schedule.ops) {
    if (op.kind != OpKind::send) continue;
    CHECK(router.hops(placement[static_cast<size_t>(op.gpu)], placement[static_cast<size_t>(op.peer)]) == 1);
    for (const DataItem& item : schedule.items_of(op)) sent_bytes += item_bytes(schedule, grid, item);
  }
  CHECK(sent_bytes == 8 * 7 * kKVBytes);

  LinkLoads loads = compute_link_loads(router, placement, checked);
  REQUIRE(loads.edge_bytes.size() == static_cast<size_t>(ring.link_count()));
  for (int32_t p = 0; p < 8; ++p) {
    const int32_t forward = edge_between(ring, p, (p + 1) % 8), backward = edge_between(ring, (p + 1) % 8, p);
    REQUIRE(forward >= 0);
    REQUIRE(backward >= 0);
    CHECK(loads.edge_bytes[static_cast<size_t>(forward)] == 7 * kKVBytes);
    CHECK(loads.edge_bytes[static_cast<size_t>(backward)] == 0);
  }
  // Each transfer on exactly one link: the links carry exactly the bytes sent.
  CHECK(std::accumulate(loads.edge_bytes.begin(), loads.edge_bytes.end(), int64_t{0}) == sent_bytes);
  CHECK(loads.busiest_edge_bytes == 7 * kKVBytes);
  CHECK(loads.busiest_edge == edge_between(ring, 0, 1));  // ties go to the lowest edge index
}

TEST_CASE("topo::compute_link_loads: collective transfers are counted once each", "[link_loads]") {
  // A hand-made all-gather of KV among 4 GPUs on one switch: 12 transfers of one chunk, each
  // GPU -> switch -> GPU, so every up-link and every down-link carries 3 chunks. Each GPU then
  // computes its own row of blocks, so that the checker accepts the schedule.
  Problem problem = forward_problem(4);
  ScheduleBuilder builder("hand", "", problem, Layout::contiguous, 4);
  const int32_t stream = builder.stream("comm");
  const int32_t compute = builder.stream("compute");
  builder.set_pass(Pass::forward);
  const int32_t gather = builder.begin_collective(CollectiveKind::all_gather, Pass::forward, {0, 1, 2, 3});
  for (int32_t src = 0; src < 4; ++src)
    for (int32_t dst = 0; dst < 4; ++dst)
      if (src != dst) {
        DataItem item{DataKind::KV, 0, src};
        builder.add_transfer(gather, src, dst, {&item, 1});
      }
  for (int32_t gpu = 0; gpu < 4; ++gpu) {
    builder.collective_op(gpu, stream, gather);
    const std::vector<BlockRef> row{{0, gpu, 0}, {0, gpu, 1}, {0, gpu, 2}, {0, gpu, 3}};
    builder.compute(gpu, Pass::forward, row, compute);
  }
  const CheckedSchedule checked = schedules::check(builder.finish());

  Topology star = build_switch(4, 50e9, 1e-6);
  Router router(star);
  LinkLoads loads = compute_link_loads(router, place_ranks(star, checked, "linear"), checked);
  REQUIRE(loads.edge_bytes.size() == 8);
  for (int64_t bytes : loads.edge_bytes) CHECK(bytes == 3 * kKVBytes);
}

TEST_CASE("topo::compute_link_loads: one mesh schedule placed two ways moves different bytes between servers",
          "[link_loads]") {
  // Mesh-Attention 4x4 forward on h100-ib:2 (GPUs 0-7 in server 0, 8-15 in server 1). Rank
  // g = R*4 + C; per GPU the forward pass has a - 1 = 3 Q steps to q_next = R*4 + (C+1)%4,
  // b - 1 = 3 KV steps to kv_next = ((R+1)%4)*4 + C, and 3 O+LSE partials, one per other
  // row s = 1..3 of its tile, each passed on to q_next: partials travel along the Q-ring hop
  // by hop towards their owner (mesh.cpp; full mask: every row has work).
  GeneratorOptions options;
  options.gpus = 16;
  options.tile = TileShape{4, 4};
  const CheckedSchedule mesh = generate_checked("mesh", forward_problem(16), options);
  Topology cluster = load_topology("h100-ib:2", 16);
  Router router(cluster);

  SECTION("linear: Q-rings inside servers, half the KV-ring hops cross") {
    // Server of rank r is r / 8. Q-rings {4R..4R+3} never leave a server, nor do the
    // partials. KV-ring C = {C, C+4, C+8, C+12} sits in servers 0,0,1,1: the hops from
    // R = 1 and R = 3 cross. 4 rings x 2 hops x 3 steps = 24 KV chunks = 100663296 B.
    LinkLoads loads = compute_link_loads(router, place_ranks(cluster, mesh, "linear"), mesh);
    CHECK(kind_bytes(loads, DataKind::KV) == 24 * kKVBytes);
    CHECK(kind_bytes(loads, DataKind::Q) == 0);
    CHECK(kind_bytes(loads, DataKind::O) == 0);
    CHECK(kind_bytes(loads, DataKind::LSE) == 0);
    CHECK(loads.inter_node_total() == 100663296);
  }
  SECTION("round-robin: KV-rings inside servers, every Q hop crosses") {
    // Server of rank r is r % 2. Q hops change C by one, hence the parity: all 16 x 3 = 48
    // Q chunks cross, and so do the 16 x 3 = 48 O and 48 LSE partials that ride the same
    // hops. KV hops add 4 to the rank: same parity, none cross.
    // 48 x (8388608 + 8388608 + 131072) = 811597824 B.
    LinkLoads loads = compute_link_loads(router, place_ranks(cluster, mesh, "round-robin"), mesh);
    CHECK(kind_bytes(loads, DataKind::Q) == 48 * kQBytes);
    CHECK(kind_bytes(loads, DataKind::O) == 48 * kOBytes);
    CHECK(kind_bytes(loads, DataKind::LSE) == 48 * kLSEBytes);
    CHECK(kind_bytes(loads, DataKind::KV) == 0);
    CHECK(loads.inter_node_total() == 811597824);
  }
  SECTION("KV-rings contiguous (rank R*4 + C -> GPU C*4 + R): KV-rings inside, half the Q hops cross") {
    // Server is 0 for C < 2, 1 for C >= 2. Q hops C -> C+1 cross from C = 1 and C = 3:
    // 4 rings x 2 x 3 = 24 Q, and the partials on those hops: 24 O and 24 LSE.
    // 24 x 16908288 = 405798912 B.
    std::string list = "list:";
    for (int32_t rank = 0; rank < 16; ++rank) list += (rank ? "," : "") + std::to_string((rank % 4) * 4 + rank / 4);
    LinkLoads loads = compute_link_loads(router, place_ranks(cluster, mesh, list), mesh);
    CHECK(kind_bytes(loads, DataKind::Q) == 24 * kQBytes);
    CHECK(kind_bytes(loads, DataKind::O) == 24 * kOBytes);
    CHECK(kind_bytes(loads, DataKind::LSE) == 24 * kLSEBytes);
    CHECK(kind_bytes(loads, DataKind::KV) == 0);
    CHECK(loads.inter_node_total() == 405798912);
  }
  SECTION("auto picks the cheaper: linear") {
    std::vector<int32_t> placed = place_ranks(cluster, mesh, "auto");
    CHECK(compute_link_loads(router, placed, mesh).inter_node_total() == 100663296);
  }
}
