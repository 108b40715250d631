// Rank placement: the named orders give the documented maps, explicit lists are validated,
// and "auto" searches the orders for the one whose busiest link is least loaded (then the
// smallest sum of link times), which puts a mesh's Q-rings or KV-rings inside servers and
// the other rings' hops between servers on one rail (hand counts below and in
// link_loads_test.cpp).
#include "tessera/topologies/placement.hpp"
#include "tessera/topologies/placement_search.hpp"

#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/link_loads.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::topo;
using Catch::Contains;

namespace {

// 1024 tokens per chunk, bf16, d = 128, full mask, forward.
Problem forward_problem(int32_t gpus, int64_t kv_heads) {
  Problem problem;
  problem.seq_len = 1024 * gpus;
  problem.heads = 32;
  problem.kv_heads = kv_heads;
  problem.head_dim = 128;
  problem.head_dim_v = 128;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  return problem;
}

CheckedSchedule schedule_of(const std::string& algorithm, int32_t gpus, std::optional<TileShape> tile = std::nullopt,
                            int64_t kv_heads = 8) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.tile = tile;
  return generate_checked(algorithm, forward_problem(gpus, kv_heads), options);
}

std::vector<int32_t> identity(int32_t n) {
  std::vector<int32_t> placement;
  for (int32_t i = 0; i < n; ++i) placement.push_back(i);
  return placement;
}

}  // namespace

TEST_CASE("topo::place_ranks: linear and round-robin", "[placement]") {
  Topology cluster = load_topology("h100-ib:2");  // GPUs 0-7 in server 0, 8-15 in server 1
  CheckedSchedule ring = schedule_of("ring", 16);
  CHECK(place_ranks(cluster, ring, "linear") == identity(16));
  // Round-robin: rank r -> server r % 2, slot r / 2, i.e. GPU (r % 2) * 8 + r / 2.
  std::vector<int32_t> expected;
  for (int32_t rank = 0; rank < 16; ++rank) expected.push_back((rank % 2) * 8 + rank / 2);
  std::vector<int32_t> placed = place_ranks(cluster, ring, "round-robin");
  CHECK(placed == expected);
  for (int32_t rank = 0; rank + 1 < 16; ++rank)
    CHECK(cluster.node_of(placed[static_cast<size_t>(rank)]) != cluster.node_of(placed[static_cast<size_t>(rank + 1)]));
  // Fewer ranks than GPUs: 8 ranks alternate between the two servers.
  CHECK(place_ranks(cluster, schedule_of("ring", 8), "round-robin") == std::vector<int32_t>{0, 8, 1, 9, 2, 10, 3, 11});
}

TEST_CASE("topo::place_ranks: rail-aligned walks every other server backwards", "[placement]") {
  Topology cluster = load_topology("h100-ib:4");  // 4 servers of 8 GPUs; GPU i of a server on rail i
  std::vector<int32_t> expected;
  for (int32_t server = 0; server < 4; ++server)
    for (int32_t slot = 0; slot < 8; ++slot) expected.push_back(server * 8 + (server % 2 == 0 ? slot : 7 - slot));
  std::vector<int32_t> placed = place_ranks(cluster, schedule_of("ring", 32), "rail-aligned");
  CHECK(placed == expected);
  // Every ring hop between servers, the wrap-around included, joins GPUs of the same index.
  for (int32_t rank = 0; rank < 32; ++rank) {
    const int32_t from = placed[static_cast<size_t>(rank)], to = placed[static_cast<size_t>((rank + 1) % 32)];
    if (cluster.node_of(from) != cluster.node_of(to)) CHECK(from % 8 == to % 8);
  }
  CHECK_THROWS_WITH(place_ranks(cluster, schedule_of("ring", 32), "snake"), Contains("rail-aligned"));
}

TEST_CASE("topo::place_ranks: explicit lists are checked position by position", "[placement]") {
  Topology ring = load_topology("ring-4");
  CheckedSchedule schedule = schedule_of("ring", 4);
  CHECK(place_ranks(ring, schedule, "list:3,0,1,2") == std::vector<int32_t>{3, 0, 1, 2});
  REQUIRE_THROWS_WITH(place_ranks(ring, schedule, "list:3,0,1"), Contains("3 entries but the schedule has 4 ranks"));
  REQUIRE_THROWS_WITH(place_ranks(ring, schedule, "list:3,0,1,2,1"),
                      Contains("position 4") && Contains("already used at position 2"));
  REQUIRE_THROWS_WITH(place_ranks(ring, schedule, "list:0,1,4,2"),
                      Contains("position 2: GPU 4 is out of range [0, 3]"));
  REQUIRE_THROWS_WITH(place_ranks(ring, schedule, "list:0,one,2,3"), Contains("position 1: 'one' is not a GPU index"));
  REQUIRE_THROWS_WITH(place_ranks(ring, schedule, "list:0,-1,2,3"), Contains("position 1"));
  REQUIRE_THROWS_WITH(place_ranks(ring, schedule, "diagonal"), Contains("unknown placement 'diagonal'"));
}

TEST_CASE("topo::place_ranks: more ranks than GPUs is refused", "[placement]") {
  Topology cluster = load_topology("h100-ib:4");
  REQUIRE_THROWS_WITH(place_ranks(cluster, schedule_of("ring", 64), "linear"),
                      Contains("the schedule has 64 ranks but the topology has 32 GPUs"));
  REQUIRE_THROWS_AS(place_ranks(cluster, schedule_of("ring", 64), "auto"), UserError);
}

TEST_CASE("topo::place_ranks: auto keeps the cheaper rings inside servers, the others on rails", "[placement]") {
  Topology cluster = load_topology("h100-ib:2");  // PXN routing: hops between rails detour over NVLink

  SECTION("ring: rail-aligned (its two hops between servers each stay on one rail)") {
    // Linear and rail-aligned both send one ring hop through a NIC each way (the busiest link),
    // but linear's hops 7 -> 8 and 15 -> 0 change local index, so PXN adds an NVLink detour.
    CHECK(place_ranks(cluster, schedule_of("ring", 16), "auto") ==
          std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 15, 14, 13, 12, 11, 10, 9, 8});
  }
  SECTION("mesh 4x4, GQA (KV chunk = Q chunk / 2): Q-rings inside servers, KV hops on one rail") {
    // Q-rings {4R..4R+3} inside servers leave 2 KV-ring hops per ring between servers (the
    // least that can cross: link_loads_test.cpp counts 24 KV chunks = 100.7 MB for linear).
    // Each hop carries 3 KV steps = 3 x 4194304 B through one NIC: the busiest link. Linear
    // joins local 4+C to local C (an NVLink detour under PXN); rail-aligned:4 (server 1 takes
    // its blocks of 4 in reverse: ranks 8-11 on GPUs 12-15, ranks 12-15 on GPUs 8-11) joins
    // KV-ring C's hops 4+C -> 12+C and 8+C -> C on one rail.
    CheckedSchedule mesh = schedule_of("mesh", 16, TileShape{4, 4});
    std::vector<int32_t> expected = identity(16);
    for (int32_t rank = 8; rank < 16; ++rank) expected[static_cast<size_t>(rank)] = rank < 12 ? rank + 4 : rank - 4;
    const RankPlacement placed = choose_placement(cluster, mesh, "auto");
    CHECK(placed.order == "rail-aligned:4");
    CHECK(placed.searched);
    CHECK(placed.gpu_of_rank == expected);
    const PlacementScore best = rank_placements(cluster, mesh).front();
    CHECK(best.busiest_link_bytes == 3 * 4194304);
    CHECK(best.busiest_link_s == Approx(3 * 4194304 / 50e9));
    Router router(cluster);
    CHECK(compute_link_loads(router, expected, mesh).inter_node_total() == 100663296);
  }
  SECTION("mesh 2x8, MHA (KV chunk = 2 Q chunks): KV-rings inside servers") {
    // a = 2, b = 8; chunks of 1024 tokens, 32 heads, d = 128, bf16:
    //   Q = O = 1024 * 32 * 128 * 2 = 8388608 B; KV = 1024 * 32 * 256 * 2 = 16777216 B;
    //   LSE = 1024 * 32 * 4 = 131072 B.
    // Linear: Q-ring {2R, 2R+1} inside a server; KV-ring C = {C, C+2, ..., C+14} is ranks
    //   C..C+6 in server 0 and C+8..C+14 in server 1, so the hops C+6 -> C+8 and C+14 -> C cross:
    //   2 rings x 2 hops x 7 KV steps = 28 KV chunks = 469762048 B; one hop's 7 KV chunks
    //   (117 MB) on one NIC.
    // KV-rings inside (stride:2+linear, rank R*2 + C -> GPU C*8 + R): every Q-ring pairs GPU R
    //   with GPU 8 + R, same local index, so each GPU's one Q step and its one O+LSE partial
    //   cross on its own NIC: 16 x (Q + O + LSE) = 16 x 16908288 = 270532608 B in all, and
    //   16908288 B on the busiest link.
    CheckedSchedule mesh = schedule_of("mesh", 16, TileShape{2, 8}, 32);
    std::vector<int32_t> kv_rings_inside;
    for (int32_t rank = 0; rank < 16; ++rank) kv_rings_inside.push_back((rank % 2) * 8 + rank / 2);
    const RankPlacement placed = choose_placement(cluster, mesh, "auto");
    CHECK(placed.gpu_of_rank == kv_rings_inside);
    // On two servers round-robin is the same map as stride:2+linear; the search keeps the
    // name it tried first.
    CHECK(placed.order == "round-robin");
    CHECK(order_ranks(cluster, 16, "stride:2+linear") == kv_rings_inside);

    Router router(cluster);
    CHECK(compute_link_loads(router, identity(16), mesh).inter_node_total() == 469762048);
    LinkLoads chosen = compute_link_loads(router, placed.gpu_of_rank, mesh);
    CHECK(chosen.inter_node_total() == 270532608);
    CHECK(chosen.inter_node_bytes[static_cast<size_t>(DataKind::KV)] == 0);
    CHECK(chosen.inter_node_bytes[static_cast<size_t>(DataKind::Q)] == 16 * 8388608);
    CHECK(rank_placements(cluster, mesh).front().busiest_link_bytes == 16908288);
  }
}

TEST_CASE("topo::order_ranks: rail-aligned blocks, packed blocks and strides", "[placement]") {
  Topology cluster = load_topology("h100-ib:4");  // 4 servers of 8 GPUs
  SECTION("rail-aligned:2: odd servers take their pairs in reverse order") {
    std::vector<int32_t> expected;
    for (int32_t server = 0; server < 4; ++server)
      for (int32_t slot = 0; slot < 8; ++slot)
        expected.push_back(server * 8 + (server % 2 == 0 ? slot : (3 - slot / 2) * 2 + slot % 2));
    CHECK(order_ranks(cluster, 32, "rail-aligned:2") == expected);
    CHECK(order_ranks(cluster, 32, "rail-aligned:1") == order_ranks(cluster, 32, "rail-aligned"));
    CHECK(order_ranks(cluster, 32, "rail-aligned:8") == identity(32));
    CHECK_THROWS_WITH(order_ranks(cluster, 32, "rail-aligned:3"), Contains("not a multiple of 3"));
  }
  SECTION("packed:3: two blocks of 3 per server, two GPUs idle") {
    CHECK(order_ranks(cluster, 9, "packed:3") == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 8, 9, 10});
    CHECK_THROWS_WITH(order_ranks(cluster, 27, "packed:3"), Contains("do not fit"));  // 4 x 2 blocks = 24
    CHECK_THROWS_AS(order_ranks(cluster, 9, "packed:9"), UserError);                   // wider than a server
  }
  SECTION("stride:T: ranks r, r + T, ... on consecutive positions") {
    // 8 ranks, T = 4: positions hold ranks 0, 4, 1, 5, 2, 6, 3, 7.
    CHECK(order_ranks(cluster, 8, "stride:4+linear") == std::vector<int32_t>{0, 2, 4, 6, 1, 3, 5, 7});
    CHECK(order_ranks(cluster, 8, "stride:1+linear") == identity(8));
    CHECK_THROWS_WITH(order_ranks(cluster, 8, "stride:4"), Contains("stride:T+ORDER"));
    CHECK_THROWS_WITH(order_ranks(cluster, 8, "stride:0+linear"), Contains("from 1 to 8"));
    CHECK_THROWS_WITH(order_ranks(cluster, 8, "stride:4+diagonal"), Contains("unknown placement"));
  }
}

TEST_CASE("topo::candidate_orders: strides and blocks come from the traffic", "[placement]") {
  // Traffic at rank distances 1 (heaviest), 5 and 2: strides 5 and 2; blocks 5, ceil(10/5) = 2,
  // 2 and 5 again. On servers of 8: rail-aligned:2 and :4 (divisors), packed:5 (5 does not
  // divide 8; 2 does, so packed:2 would be linear).
  Topology cluster = load_topology("h100-ib:2");
  const std::vector<RankTraffic> traffic{{0, 1, 300}, {1, 2, 300}, {0, 5, 200}, {3, 1, 100}};
  const std::vector<std::string> orders = candidate_orders(cluster, 10, traffic);
  const std::vector<std::string> sequences{"linear", "rail-aligned", "round-robin", "rail-aligned:2",
                                           "rail-aligned:4", "packed:5"};
  std::vector<std::string> expected;
  for (const std::string prefix : {"", "stride:5+", "stride:2+"})
    for (const std::string& sequence : sequences) expected.push_back(prefix + sequence);
  CHECK(orders == expected);
}

TEST_CASE("topo::place_ranks: auto leaves gaps to keep rings of 3 whole on servers of 8", "[placement]") {
  // Mesh 3x4 (12 ranks) on h100-ib:2 (16 GPUs). Q-rings {3R, 3R+1, 3R+2} do not divide a
  // server, but with 4 spare GPUs two rings go to each server: GPUs 0-5 and 8-13.
  // Inter-node bytes (GQA, 1024-token chunks: KV = 4194304 B, Q = O = 8388608 B, LSE = 131072 B):
  //  - rings kept whole: KV-ring C = {C, C+3, C+6, C+9} has R = 0, 1 in server 0 and R = 2, 3 in
  //    server 1, so 2 of its 4 hops cross: 3 rings x 2 x 3 KV steps = 18 KV = 75497472 B;
  //  - linear: the same 18 KV, plus Q-ring 2 = ranks {6, 7, 8} straddles: hops 7 -> 8 and 8 -> 6
  //    cross at both Q steps (4 Q), and 4 of its 6 partials cross (4 O + 4 LSE).
  // Auto finds it as packed:3 (blocks of 3 from the KV-ring's rank distance, 3): its busiest
  // link carries one KV-ring hop, 3 KV steps.
  Topology cluster = load_topology("h100-ib:2");
  CheckedSchedule mesh = schedule_of("mesh", 12, TileShape{3, 4});
  std::vector<int32_t> placed = place_ranks(cluster, mesh, "auto");
  CHECK(placed == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13});
  CHECK(order_ranks(cluster, 12, "packed:3") == placed);

  Router router(cluster);
  CHECK(compute_link_loads(router, placed, mesh).inter_node_total() == 18 * 4194304);
  LinkLoads linear_loads = compute_link_loads(router, identity(12), mesh);
  CHECK(linear_loads.inter_node_total() == 18 * 4194304 + 4 * 8388608 + 4 * 8388608 + 4 * 131072);
}
