// Ranks sharing devices (sim/shared_devices.hpp): P ranks on G devices. Every expected time is
// worked out by hand from processor sharing (k ops on a device each progress at speedup(k) / k
// of their alone-rate) and copies at the copy bandwidth.
#include <catch2/catch.hpp>

#include <vector>

#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/topologies/builders.hpp"

using namespace tessera;

namespace {

// Records when each compute op (by tag) ended and each transfer arrived.
struct Recorder final : sim::EngineClient {
  const sim::Engine* engine = nullptr;
  std::vector<std::pair<uint32_t, double>> computed;
  std::vector<std::pair<int32_t, double>> arrived;
  void compute_done(uint32_t tag) override { computed.emplace_back(tag, engine->now_s()); }
  void transfer_arrived(int32_t transfer) override { arrived.emplace_back(transfer, engine->now_s()); }
};

// One block of `work_s` on each of `ranks` ranks, ranks on `gpus` GPUs (rank r on r * G / P).
// `devices`: the busy-devices curve (empty: independent devices).
std::vector<double> block_ends(int32_t ranks, int32_t gpus, std::vector<double> speedup, const std::vector<double>& work_s,
                               std::vector<double> devices = {}) {
  const topo::Topology star = topo::build_switch(gpus, 1e9, 0);
  sim::DeviceSharing sharing;
  sharing.concurrency_speedup = std::move(speedup);
  sharing.devices_speedup = std::move(devices);
  sim::EngineOptions options;
  options.sharing = &sharing;
  std::vector<int32_t> gpu_of_rank;
  for (int32_t rank = 0; rank < ranks; ++rank) gpu_of_rank.push_back(rank * gpus / ranks);
  Recorder client;
  sim::Engine engine(star, gpu_of_rank, options, client);
  client.engine = &engine;
  for (int32_t rank = 0; rank < ranks; ++rank) engine.start_compute_on(rank, work_s[static_cast<size_t>(rank)], static_cast<uint32_t>(rank));
  engine.run();
  std::vector<double> ends(static_cast<size_t>(ranks), -1);
  for (const auto& [tag, at_s] : client.computed) ends[tag] = at_s;
  return ends;
}

}  // namespace

TEST_CASE("4 ranks on 1 device: each block takes 4x its time alone; on 2 devices 2x", "[sim][devices]") {
  // One core (speedup 1 at any concurrency): 4 blocks of 1 s progress at 1/4 each, all end at 4 s.
  for (double end_s : block_ends(4, 1, {}, {1, 1, 1, 1})) CHECK(end_s == Approx(4.0).epsilon(1e-12));
  // Two devices, two ranks each: 2 s.
  for (double end_s : block_ends(4, 2, {}, {1, 1, 1, 1})) CHECK(end_s == Approx(2.0).epsilon(1e-12));
  // Four devices: alone, 1 s.
  for (double end_s : block_ends(4, 4, {}, {1, 1, 1, 1})) CHECK(end_s == Approx(1.0).epsilon(1e-12));
  // A GPU whose throughput with 4 concurrent blocks is 2.5x one block's: 4 / 2.5 = 1.6 s.
  for (double end_s : block_ends(4, 1, {1, 1.8, 2.2, 2.5}, {1, 1, 1, 1})) CHECK(end_s == Approx(1.6).epsilon(1e-12));
}

TEST_CASE("processor sharing: a shorter block leaves and the rest speed up", "[sim][devices]") {
  // One core, blocks of 1 s and 3 s: both at rate 1/2 until the first is done at 2 s (1 s of
  // work each); the second then runs alone with 2 s left: 4 s.
  const std::vector<double> ends = block_ends(2, 1, {}, {1, 3});
  CHECK(ends[0] == Approx(2.0).epsilon(1e-12));
  CHECK(ends[1] == Approx(4.0).epsilon(1e-12));
  // With speedup(2) = 1.5: rate 0.75 each; the first ends at 1 / 0.75 = 4/3 s, the second has
  // 3 - 1 = 2 s left alone: 4/3 + 2 s.
  const std::vector<double> curved = block_ends(2, 1, {1, 1.5}, {1, 3});
  CHECK(curved[0] == Approx(4.0 / 3).epsilon(1e-12));
  CHECK(curved[1] == Approx(4.0 / 3 + 2).epsilon(1e-12));
}

TEST_CASE("busy devices share the machine: each runs at devices_speedup(n) / n while n are busy", "[sim][devices]") {
  // Two devices whose throughput together is 1.5x one's: blocks of 0.5 s and 1 s, one per
  // device, both at 0.75 until the first is done at 0.5 / 0.75 = 2/3 s (0.5 s of work each);
  // the second then runs alone at full rate with 0.5 s left: 7/6 s.
  const std::vector<double> ends = block_ends(2, 2, {}, {0.5, 1}, {1, 1.5});
  CHECK(ends[0] == Approx(2.0 / 3).epsilon(1e-12));
  CHECK(ends[1] == Approx(7.0 / 6).epsilon(1e-12));
  // With the curve at 2 (independent devices) each block takes its own time.
  const std::vector<double> independent = block_ends(2, 2, {}, {0.5, 1}, {1, 2});
  CHECK(independent[0] == Approx(0.5).epsilon(1e-12));
  CHECK(independent[1] == Approx(1.0).epsilon(1e-12));
  // Two ranks on each of two devices, 1 s blocks, devices 1.5x: each device at 0.75 shared by
  // two blocks, 0.375 per block: all end at 1 / 0.375 = 8/3 s.
  for (double end_s : block_ends(4, 2, {}, {1, 1, 1, 1}, {1, 1.5})) CHECK(end_s == Approx(8.0 / 3).epsilon(1e-12));
  // Beyond the curve each further device adds its measured average: 4 devices on {1, 1.5} give
  // 1.5 x 4 / 2 = 3, so 0.75 each: 1 s blocks end at 4/3 s.
  for (double end_s : block_ends(4, 4, {}, {1, 1, 1, 1}, {1, 1.5})) CHECK(end_s == Approx(4.0 / 3).epsilon(1e-12));
}

TEST_CASE("a transfer between ranks on one device takes bytes / copy bandwidth, shared by concurrent copies",
          "[sim][devices]") {
  // Ranks 0, 1 on GPU 0 and rank 2 on GPU 1 of a 1 GB/s switch without latency; copies at 10 GB/s.
  const topo::Topology star = topo::build_switch(2, 1e9, 0);
  sim::DeviceSharing sharing;
  sharing.copy_bytes_per_s = 10e9;
  sim::EngineOptions options;
  options.sharing = &sharing;
  options.message_costs = MessageCosts::none();
  Recorder client;
  sim::Engine engine(star, {0, 0, 1}, options, client);
  client.engine = &engine;
  // Alone: 1 GB at 10 GB/s = 0.1 s.
  int32_t alone = engine.begin_transfer();
  engine.add_task(alone, 0, 1, 1e9, true);
  engine.start_transfer(alone);
  engine.run();
  REQUIRE(client.arrived.size() == 1);
  CHECK(client.arrived[0].second == Approx(0.1).epsilon(1e-12));
  // Two copies at once on GPU 0 (0 -> 1 and 1 -> 0) share its 10 GB/s: 0.2 s each; a message
  // 0 -> 2 leaves the device and crosses the switch at 1 GB/s alone: 1 s.
  client.arrived.clear();
  const double started_s = engine.now_s();
  int32_t both = engine.begin_transfer();
  engine.add_task(both, 0, 1, 1e9, true);
  engine.add_task(both, 1, 0, 1e9, true);
  engine.start_transfer(both);
  int32_t across = engine.begin_transfer();
  engine.add_task(across, 0, 2, 1e9, true);
  engine.start_transfer(across);
  engine.run();
  REQUIRE(client.arrived.size() == 2);
  CHECK(client.arrived[0].second - started_s == Approx(0.2).epsilon(1e-12));
  CHECK(client.arrived[1].second - started_s == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("a ring on ranks sharing devices: the total block time over the devices", "[sim][devices]") {
  // A forward ring of 4 ranks over 4096 tokens, full mask: 16 equal blocks. With copies free
  // and no per-message cost, the ranks progress in lock step, so a device never idles: on one
  // core the makespan is the 16 blocks' time, on two cores half of it; one rank per device it is
  // 4 blocks' time.
  Problem problem;
  problem.seq_len = 4096;
  problem.heads = problem.kv_heads = 4;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  schedules::GeneratorOptions generator;
  generator.gpus = 4;
  generator.layout = Layout::contiguous;
  const schedules::CheckedSchedule checked = schedules::generate_checked("ring", problem, generator);
  sim::GpuProfile gpu;
  double block_s = 0;
  for (const Op& op : checked.schedule().ops)
    if (op.kind == OpKind::compute) block_s = sim::op_compute_s(checked.schedule(), checked.grid(), op, gpu);
  REQUIRE(block_s > 0);
  sim::SimOptions options;
  options.set_message_costs(MessageCosts::none());
  options.device_sharing = sim::DeviceSharing{};
  const topo::Topology one = topo::build_switch(1, 1e15, 0), two = topo::build_switch(2, 1e15, 0);
  CHECK(sim::simulate(checked, one, {0, 0, 0, 0}, gpu, options).makespan_s == Approx(16 * block_s).epsilon(1e-6));
  CHECK(sim::simulate(checked, two, {0, 0, 1, 1}, gpu, options).makespan_s == Approx(8 * block_s).epsilon(1e-6));
  const topo::Topology four = topo::build_switch(4, 1e15, 0);
  CHECK(sim::simulate(checked, four, {0, 1, 2, 3}, gpu, options).makespan_s == Approx(4 * block_s).epsilon(1e-6));
}
