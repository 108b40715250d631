// Ring-Attention as production code runs it, checked against closed forms:
//  - the overlap of research/peers.md 5.3 on a uniform network: compute-bound, a ring takes
//    the busiest GPU's compute plus at most one transfer; communication-bound, P - 1 transfers
//    one after another plus the last block;
//  - Mesh-Attention's 1 x P tile is a ring and must take the same time;
//  - bounded buffers: no GPU ever holds more remote chunks on a stream than its buffers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "common/problems.hpp"
#include "tessera/core/data_size.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/placement.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

struct Run {
  std::optional<CheckedSchedule> checked;
  sim::SimResult result;
  const Schedule& schedule() const { return checked->schedule(); }
};

// Every overhead is set explicitly, so the closed forms below hold whatever the defaults are.
sim::SimOptions plain_options() {
  sim::SimOptions options;
  options.fidelity = sim::Fidelity::flow;
  options.message_overhead_s = 0;
  options.nvlink_message_latency_s = 0;
  options.network_message_latency_s = 0;
  options.channels = 0;
  return options;
}

sim::GpuProfile no_launch_profile() {
  sim::GpuProfile gpu = sim::gpu_profile("h100");
  gpu.launch_overhead_s = 0;
  return gpu;
}

Run simulate(const std::string& algorithm, const Problem& problem, GeneratorOptions options, const topo::Topology& topology,
             const std::string& placement = "linear") {
  Run run;
  run.checked = schedules::check(generate_schedule(algorithm, problem, options));
  const auto ranks = topo::place_ranks(topology, *run.checked, placement);
  run.result = sim::simulate(*run.checked, topology, ranks, no_launch_profile(), plain_options());
  return run;
}

using test::llama_like;

GeneratorOptions options_for(int32_t gpus, Layout layout, int32_t buffers = 2) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = layout;
  options.buffers = buffers;
  return options;
}

// The most buffers held at once on any (GPU, receive stream): a receive holds one from its
// start until every op that frees it (schedules::buffer_releases) has finished.
int32_t most_buffers_held(const Run& run) {
  const Schedule& schedule = run.schedule();
  const schedules::BufferReleases freeing = schedules::buffer_releases(schedule);
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<double, int>>> events;  // (gpu, stream) -> (time, +1/-1)
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    if (op.kind != OpKind::recv) continue;
    double freed = run.result.op_finish_s[index];
    for (uint32_t release : freeing.of(index)) freed = std::max(freed, run.result.op_finish_s[release]);
    auto& list = events[{op.gpu, op.stream}];
    list.emplace_back(run.result.op_start_s[index], +1);
    list.emplace_back(freed, -1);
  }
  int32_t most = 0;
  for (auto& [key, list] : events) {
    // A buffer freed at the instant another is taken is free for it: releases first.
    std::sort(list.begin(), list.end());
    int32_t held = 0;
    for (const auto& [time, change] : list) most = std::max(most, held += change);
  }
  return most;
}

}  // namespace

namespace {

// A full-mask forward ring of 8 GPUs, 4096 tokens each, on dedicated links: every step is one
// block of 4096^2 pairs and one 16.8 MB KV chunk, so one block and one transfer time it all.
struct RingSteps {
  Run run;
  double block_s = 0;     // one block on GPU 0, as the simulator's GPU model prices it
  double transfer_s = 0;  // one KV chunk: latency + bytes over the link
};
RingSteps ring_steps(int32_t gpus, double bandwidth, double latency) {
  const Problem problem = llama_like(int64_t{gpus} * 4096, MaskKind::full, Pass::forward);
  RingSteps steps;
  steps.run = simulate("ring", problem, options_for(gpus, Layout::contiguous),
                       topo::build_fully_connected(gpus, bandwidth, latency));
  steps.transfer_s = latency + static_cast<double>(item_bytes(problem, 1, 4096, DataKind::KV)) / bandwidth;
  const CheckedSchedule& checked = *steps.run.checked;
  for (const Op& op : checked.schedule().ops)
    if (op.kind == OpKind::compute && op.gpu == 0)
      steps.block_s = sim::op_compute_s(checked.schedule(), checked.grid(), op, no_launch_profile());
  return steps;
}

}  // namespace

TEST_CASE("a compute-bound ring hides every transfer but one", "[sim][ring][overlap]") {
  // At 50 GB/s the chunk takes 0.34 ms; the block about 0.45 ms on an H100.
  const int32_t gpus = 8;
  const RingSteps steps = ring_steps(gpus, 50e9, 5e-6);
  REQUIRE(steps.block_s > steps.transfer_s);  // the premise: compute-bound
  const double compute_s = gpus * steps.block_s;
  CHECK(steps.run.result.makespan_s >= compute_s * (1 - 1e-9));
  CHECK(steps.run.result.makespan_s <= (compute_s + steps.transfer_s) * 1.02);
}

TEST_CASE("a communication-bound ring takes P - 1 transfers and one block", "[sim][ring][overlap]") {
  // At 5 GB/s the chunk takes 3.4 ms.
  const int32_t gpus = 8;
  const RingSteps steps = ring_steps(gpus, 5e9, 5e-6);
  REQUIRE(steps.transfer_s > steps.block_s);  // the premise: communication-bound
  const double expected_s = (gpus - 1) * steps.transfer_s + steps.block_s;
  CHECK(std::abs(steps.run.result.makespan_s - expected_s) <= 0.02 * expected_s);
}

TEST_CASE("ring and Mesh-Attention's 1 x P tile take the same time", "[sim][ring][mesh]") {
  // Mesh 1 x P keeps its query chunk and passes every KV chunk around one ring of all P GPUs:
  // it is Ring-Attention, and a fair model gives both the same time.
  for (int32_t gpus : {16, 32, 64}) {
    // The uniform network of the front ends: one non-blocking switch, so each GPU's link is
    // shared by everything it sends (scenario::uniform_topology).
    const topo::Topology uniform = topo::build_switch(gpus, 50e9, 2.5e-6);
    const topo::Topology cluster = topo::load_topology("h100-ib:" + std::to_string(gpus / 8));
    for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) {
      const Problem problem = llama_like(int64_t{gpus} * 4096, MaskKind::causal, pass);
      GeneratorOptions mesh_options = options_for(gpus, Layout::zigzag);
      mesh_options.tile = TileShape{1, gpus};
      for (const topo::Topology* network : {&uniform, &cluster}) {
        Run ring = simulate("ring", problem, options_for(gpus, Layout::zigzag), *network);
        Run mesh = simulate("mesh", problem, mesh_options, *network);
        INFO("P = " << gpus << ", pass " << to_string(pass) << (network == &uniform ? ", uniform" : ", h100-ib")
                    << ": ring " << ring.result.makespan_s << " s, mesh 1xP " << mesh.result.makespan_s << " s");
        CHECK(std::abs(ring.result.makespan_s - mesh.result.makespan_s) <= 0.01 * mesh.result.makespan_s);
      }
    }
  }
}

TEST_CASE("no GPU holds more remote chunks on a stream than its buffers", "[sim][ring][buffers]") {
  const int32_t gpus = 8;
  const topo::Topology network = topo::build_fully_connected(gpus, 50e9, 5e-6);
  for (Pass pass : {Pass::forward, Pass::backward}) {
    const Problem problem = llama_like(int64_t{gpus} * 4096, MaskKind::causal, pass);
    for (const std::string& variant : {"pass-kv", "pass-q"})
      for (int32_t buffers : {2, 3}) {
        GeneratorOptions options = options_for(gpus, Layout::zigzag, buffers);
        options.variant = variant;
        Run run = simulate("ring", problem, options, network);
        INFO(variant << ", " << to_string(pass) << ", " << buffers << " buffers");
        CHECK(most_buffers_held(run) <= buffers);
      }
    // One buffer cannot work with rendezvous transfers: every GPU must pass its chunk on before
    // it can take the next, and its successor is in the same position, all around the ring.
    GeneratorOptions single = options_for(gpus, Layout::zigzag, 1);
    const Schedule one_buffer = generate_schedule("ring", problem, single);
    const CheckResult refused = check_schedule(one_buffer, BlockGrid(problem, Layout::zigzag, gpus));
    CHECK_THAT(refused.violation, Catch::Contains("deadlock") && Catch::Contains("buffers"));
    // The check can fail: with unbounded buffers a compute-bound ring (NVLink-class links)
    // receives far ahead.
    const topo::Topology fast = topo::build_fully_connected(gpus, 450e9, 2e-6);
    Run unbounded = simulate("ring", problem, options_for(gpus, Layout::zigzag, 0), fast);
    CHECK(most_buffers_held(unbounded) > 2);
  }
}
