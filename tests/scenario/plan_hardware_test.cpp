// The scenario layer gives the Mesh planner the network its tile runs on (issue 14): per ring,
// the narrowest link and the slowest fixed hop cost under the placement, with the per-message
// costs of each path (NVLink inside a server, the network across). Expected values are derived
// from the topology's figures and NCCL's defaults, and the plan orders from the plan's rules.
#include <catch2/catch.hpp>

#include <string>

#include "tessera/schedules/checker.hpp"
#include "tessera/scenario/plan_hardware.hpp"
#include "tessera/scenario/plan_hardware.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/routed_network.hpp"
#include "tessera/topologies/routing.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

// Two servers of four GPUs: NVLink 450 GB/s and 1 us per hop inside, 400 Gb/s NICs between.
topo::Topology two_servers() {
  topo::HierarchicalSpec spec;
  spec.nodes = 2;
  spec.gpus_per_node = 4;
  spec.nics_per_node = 4;
  spec.nvlink_bytes_per_s = 450e9;
  spec.nvlink_latency_s = 1e-6;
  spec.nic_bytes_per_s = 50e9;
  return topo::build_hierarchical(spec);
}

std::vector<int32_t> linear(int32_t ranks) {
  std::vector<int32_t> placement(static_cast<size_t>(ranks));
  for (int32_t rank = 0; rank < ranks; ++rank) placement[static_cast<size_t>(rank)] = rank;
  return placement;
}

// 32K tokens on 8 GPUs, GQA 32 / 8, d = 128, causal, forward: a Q chunk (4096 x 32 x 128 x 2 B)
// is twice a KV chunk (4096 x 8 x 256 x 2 B).
Problem gqa_forward() {
  Problem problem;
  problem.seq_len = 32 * 1024;
  problem.heads = 32;
  problem.kv_heads = 8;
  problem.head_dim = problem.head_dim_v = 128;
  problem.mask.kind = MaskKind::causal;
  problem.pass = Pass::forward;
  return problem;
}

std::string received_order(const Schedule& schedule) {
  std::string order;
  for (const Op& op : schedule.ops) {
    if (op.gpu != 0 || op.kind != OpKind::recv) continue;
    for (const DataItem& item : schedule.items_of(op)) {
      if (item.kind == DataKind::Q) order += 'q';
      if (item.kind == DataKind::KV) order += 'k';
    }
  }
  return order;
}

}  // namespace

TEST_CASE("a routed path is NVLink inside a server and network across", "[scenario][overheads]") {
  const topo::Topology cluster = two_servers();
  const topo::RoutedNetwork network(cluster, {0, 1, 4, 0});
  CHECK(network.path_class(0, 1) == PathClass::nvlink);
  CHECK(network.path_class(0, 2) == PathClass::network);
  CHECK(network.path_class(0, 3) == PathClass::local);  // ranks 0 and 3 share GPU 0
}

TEST_CASE("the analytical model charges each path its own message latency", "[scenario][overheads]") {
  // Two ranks, full mask, forward: time = max(block, transfer) + block. Placed in one server,
  // the transfer is its NVLink route's latencies, NCCL's 8.4 + 3.4 us and the bytes over the
  // narrowest link; placed across servers, the network route with 8.4 + 14.0 us.
  Problem problem;
  problem.seq_len = 4096;
  problem.heads = problem.kv_heads = 32;
  problem.head_dim = problem.head_dim_v = 128;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  GeneratorOptions options;
  options.gpus = 2;
  options.layout = Layout::contiguous;
  const Schedule schedule = generate_schedule("ring", problem, options);
  const BlockGrid grid(problem, Layout::contiguous, 2);
  const CheckResult check = check_schedule(schedule, grid);
  REQUIRE(check.ok());
  const topo::Topology cluster = two_servers();
  const Hardware hardware;
  const double block_s = 4.0 * 2048 * 2048 * 128 * 32 / (0.6 * 989e12) + 3e-6;
  const double chunk_bytes = 2048.0 * 32 * 256 * 2;
  topo::Router router(cluster);
  for (const auto& [other, message_s] : {std::pair{1, 8.4e-6 + 3.4e-6}, std::pair{4, 8.4e-6 + 14.0e-6}}) {
    double wire_s = 0, narrowest = 1e300;
    for (int32_t edge : router.route(0, other)) {
      const topo::LinkInfo& link = cluster.link(edge);
      wire_s += link.latency_s;
      narrowest = std::min(narrowest, link.bytes_per_s);
    }
    const double transfer_s = wire_s + message_s + chunk_bytes / narrowest;
    const topo::RoutedNetwork network(cluster, {0, other});
    INFO("ranks on GPUs 0 and " << other);
    CHECK(cost_schedule(schedules::check(schedule), hardware, &network).time_s ==
          Approx(std::max(block_s, transfer_s) + block_s).epsilon(1e-12));
  }
}

TEST_CASE("each ring is weighed by its own narrowest link and slowest hop", "[scenario][planner]") {
  // A 4 x 2 tile placed linearly: the Q-rings (ranks R*4 .. R*4+3) each fill one server, so a
  // Q hop is GPU -> NVSwitch -> GPU: 450 GB/s, 2 x 1 us, plus NCCL's 8.4 + 3.4 us. The KV-rings
  // (ranks C and 4 + C) cross servers: the NIC's 50 GB/s is the narrowest link, and a hop pays
  // its route's link latencies plus NCCL's 8.4 + 14.0 us.
  const topo::Topology cluster = two_servers();
  const std::vector<int32_t> placement = linear(8);
  const PlanHardware hardware = scenario::ring_plan_hardware(cluster, placement, TileShape{4, 2}, MessageCosts{}, 1e15);
  CHECK(hardware.flops_per_s == 1e15);
  CHECK(hardware.q_ring_bytes_per_s == 450e9);
  CHECK(hardware.q_ring_latency_s == Approx(2e-6 + 8.4e-6 + 3.4e-6).epsilon(1e-12));
  CHECK(hardware.kv_ring_bytes_per_s == 50e9);
  topo::Router router(cluster);
  double slowest_wire_s = 0;
  for (int32_t rank = 0; rank < 8; ++rank) {
    double wire_s = 0;
    for (int32_t edge : router.route(rank, (rank + 4) % 8))
      wire_s += cluster.link(edge).latency_s;
    slowest_wire_s = std::max(slowest_wire_s, wire_s);
  }
  CHECK(slowest_wire_s > 2e-6);  // it leaves the server: NICs and a switch
  CHECK(hardware.kv_ring_latency_s == Approx(slowest_wire_s + 8.4e-6 + 14.0e-6).epsilon(1e-12));
}

TEST_CASE("the planner weighs the ring it runs on", "[scenario][planner]") {
  // Principle 1 takes a Q hop when c / r (KV columns over Q rows present) exceeds
  // q_step / kv_step. On the uniform network (50 GB/s, 5 us, NCCL's 22.4 us) a Q hop costs
  // (27.4 + 671) / (27.4 + 335.5) = 1.92 KV hops: at (1, 1) a KV hop goes first, then the KV
  // ring is complete and the three Q hops follow: "kqqq". On two servers with the Q-rings inside
  // them a Q hop rides NVLink, (13.8 + 2 + 74.6 us) against a KV hop of more than 22.4 + 335.5 us:
  // ratio below 0.26, so every Q hop (c / r = 1, 1/2, 1/3) goes before the one KV hop: "qqqk".
  const Problem problem = gqa_forward();
  GeneratorOptions options;
  options.gpus = 8;
  options.layout = Layout::zigzag;
  options.tile = TileShape{4, 2};
  const topo::Topology cluster = two_servers();
  const Hardware hardware;  // H100 at 60 %, 50 GB/s and 5 us uniform, NCCL's message costs

  scenario::PlanTarget uniform{hardware, nullptr, "linear", {}, std::nullopt};
  CHECK(received_order(scenario::generate_checked("mesh", problem, options, uniform).schedule()) == "kqqq");

  scenario::PlanTarget placed{hardware, &cluster, "linear", {}, std::nullopt};
  CHECK(received_order(scenario::generate_checked("mesh", problem, options, placed).schedule()) == "qqqk");
  // The same with the placement already chosen.
  placed.ranks = linear(8);
  CHECK(received_order(scenario::generate_checked("mesh", problem, options, placed).schedule()) == "qqqk");
}
