// The simulator against closed forms: max-min sharing (research/simulators.md 4.3), the ring
// all-reduce time 2(N-1)/N S/B, a latency-only chain, a compute-bound schedule, and the two
// fidelity levels agreeing where no link is shared.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/collective_sim.hpp"
#include "tessera/sim/flow_network.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/trace.hpp"
#include "tessera/topologies/builders.hpp"

#include "common/scratch.hpp"

using namespace tessera;
using namespace tessera::schedules;
using test_support::scratch_path;

TEST_CASE("max-min sharing: the three-flow example", "[sim][maxmin]") {
  // L1 = 1 GB/s, L2 = 2 GB/s; a on (L1, L2), b on L1, c on L2, 1 GB each. L1 is the
  // bottleneck at 0.5 GB/s for a and b; c gets 1.5 GB/s and ends at 2/3 s; a and b at 2 s.
  sim::FlowNetwork network({1e9, 2e9});
  const int32_t both[] = {0, 1}, first[] = {0}, second[] = {1};
  int32_t a = network.start(both, 1e9, 0), b = network.start(first, 1e9, 0), c = network.start(second, 1e9, 0);
  CHECK(network.rate(a) == Approx(0.5e9));
  CHECK(network.rate(b) == Approx(0.5e9));
  CHECK(network.rate(c) == Approx(1.5e9));
  auto [t1, f1] = network.next_completion();
  CHECK(f1 == c);
  CHECK(t1 == Approx(2.0 / 3.0).epsilon(1e-12));
  network.finish(f1, t1);
  // a is still held to 0.5 GB/s by L1, so nothing changes for a and b.
  auto [t2, f2] = network.next_completion();
  CHECK(t2 == Approx(2.0).epsilon(1e-12));
  network.finish(f2, t2);
  auto [t3, f3] = network.next_completion();
  CHECK(t3 == Approx(2.0).epsilon(1e-12));
  CHECK((f2 == a || f3 == a));
  network.finish(f3, t3);
  CHECK(network.next_completion().second == -1);
  CHECK(network.carried_bytes()[0] == Approx(2e9));
  CHECK(network.carried_bytes()[1] == Approx(2e9));
}

TEST_CASE("ring all-reduce takes 2(N-1)/N S/B", "[sim][collective]") {
  const double bytes = 1e9, bandwidth = 50e9;
  for (int32_t ranks : {8, 64, 256, 1024}) {
    topo::Topology ring = topo::build_ring(ranks, bandwidth, 0, false);
    std::vector<int32_t> placement(static_cast<size_t>(ranks));
    for (int32_t rank = 0; rank < ranks; ++rank) placement[static_cast<size_t>(rank)] = rank;
    auto result = sim::simulate_collective(CollectiveKind::all_reduce, bytes, ring, placement, sim::Fidelity::flow);
    double expected = 2.0 * (ranks - 1) / ranks * bytes / bandwidth;
    INFO("N = " << ranks);
    CHECK(std::abs(result.makespan_s - expected) / expected <= 1e-9);
    CHECK(result.flows == static_cast<size_t>(2 * (ranks - 1) * ranks));
    CHECK(result.busbw_bytes_per_s == Approx(bandwidth).epsilon(1e-9));
  }
}

TEST_CASE("ring all-reduce with link latency takes 2(N-1) (alpha + S/(N B))", "[sim][collective]") {
  // The worked check of research/simulators.md 3.2: 1 GiB over 8 ranks on a unidirectional
  // ring of 400 GB/s links with 0.93625 us latency. Each of the 14 steps moves S/8 over one
  // link, then pays its latency: 14 x 0.93625 us + 1.75 x 1 GiB / 400 GB/s = 4.7107 ms, and a
  // bus bandwidth of 1.75 S / t = 398.9 GB/s. No link is shared, so alpha-beta agrees.
  const double bytes = 1073741824.0;
  topo::Topology ring = topo::build_ring(8, 400e9, 0.93625e-6, false);
  const std::vector<int32_t> placement = {0, 1, 2, 3, 4, 5, 6, 7};
  for (sim::Fidelity fidelity : {sim::Fidelity::flow, sim::Fidelity::alpha_beta}) {
    auto result = sim::simulate_collective(CollectiveKind::all_reduce, bytes, ring, placement, fidelity);
    INFO(sim::to_string(fidelity));
    CHECK(result.makespan_s * 1e3 == Approx(4.7107).margin(5e-5));
    CHECK(result.busbw_bytes_per_s / 1e9 == Approx(398.9).margin(0.05));
  }
}

TEST_CASE("a latency-only chain adds the hop latencies", "[sim][latency]") {
  // Rank 0 on GPU 0, rank 1 on GPU 3 of a unidirectional ring: 3 hops of 1 us, 1 byte.
  topo::Topology ring = topo::build_ring(4, 1e9, 1e-6, false);
  auto result = sim::simulate_collective(CollectiveKind::send_recv, 1, ring, {0, 3}, sim::Fidelity::flow);
  CHECK(result.makespan_s == Approx(3e-6 + 1.0 / 1e9).epsilon(1e-12));
  auto alpha_beta = sim::simulate_collective(CollectiveKind::send_recv, 1, ring, {0, 3}, sim::Fidelity::alpha_beta);
  CHECK(alpha_beta.makespan_s == Approx(3e-6 + 1.0 / 1e9).epsilon(1e-12));
}

namespace {
struct Simulated {
  Schedule schedule;
  sim::SimResult result;
};

Simulated run(const std::string& algorithm, const Problem& problem, int32_t gpus, const topo::Topology& topology,
              sim::Fidelity fidelity, const sim::GpuProfile& gpu = sim::GpuProfile{}) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = Layout::contiguous;
  const CheckedSchedule checked = schedules::check(generate_schedule(algorithm, problem, options));
  std::vector<int32_t> placement(static_cast<size_t>(gpus));
  for (int32_t rank = 0; rank < gpus; ++rank) placement[static_cast<size_t>(rank)] = rank;
  sim::SimOptions options_sim;
  options_sim.fidelity = fidelity;
  options_sim.set_message_costs(MessageCosts::none());  // the closed forms below count wires only
  auto result = sim::simulate(checked, topology, placement, gpu, options_sim);
  return {checked.schedule(), std::move(result)};
}

Problem full_forward(int64_t seq_len) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = 8;
  problem.kv_heads = 8;
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  return problem;
}
}  // namespace

TEST_CASE("a compute-bound schedule's makespan is its compute", "[sim][compute]") {
  // One GPU: 4 N^2 d H FLOPs at peak x efficiency(N, N), plus one kernel launch.
  const int64_t seq = 8192;
  sim::GpuProfile gpu;
  auto simulated = run("ring", full_forward(seq), 1, topo::build_switch(1, 1e9, 0), sim::Fidelity::flow, gpu);
  double efficiency = gpu.max_efficiency * seq / (seq + gpu.half_efficiency_tokens);
  double expected = 4.0 * seq * seq * 64 * 8 / (gpu.peak_flops_per_s_16bit * efficiency) + gpu.launch_overhead_s;
  CHECK(simulated.result.makespan_s == Approx(expected).epsilon(1e-12));
}

TEST_CASE("flow and alpha-beta fidelity agree where no link is shared", "[sim][fidelity]") {
  // A forward ring on a bidirectional ring topology: each step every GPU sends one message to
  // its neighbour over its own link, so no two transfers ever share a link.
  Problem problem = full_forward(1 << 14);
  topo::Topology ring = topo::build_ring(8, 25e9, 2e-6, true);
  auto flow = run("ring", problem, 8, ring, sim::Fidelity::flow);
  auto alpha_beta = run("ring", problem, 8, ring, sim::Fidelity::alpha_beta);
  CHECK(flow.result.makespan_s == Approx(alpha_beta.result.makespan_s).epsilon(1e-12));
  for (size_t index = 0; index < flow.schedule.ops.size(); ++index)
    CHECK(flow.result.op_finish_s[index] == Approx(alpha_beta.result.op_finish_s[index]).epsilon(1e-12));
}

TEST_CASE("transfers sharing a link share its bandwidth", "[sim][maxmin]") {
  // All-to-all of 3 ranks through one switch: every uplink and every downlink carries two
  // flows of S/3, so each runs at half the link rate (alpha-beta ignores the sharing).
  topo::Topology star = topo::build_switch(3, 1e9, 0);
  auto result = sim::simulate_collective(CollectiveKind::all_to_all, 3e9, star, {0, 1, 2}, sim::Fidelity::flow);
  CHECK(result.makespan_s == Approx(2.0).epsilon(1e-12));
  auto alpha_beta = sim::simulate_collective(CollectiveKind::all_to_all, 3e9, star, {0, 1, 2},
                                             sim::Fidelity::alpha_beta);
  CHECK(alpha_beta.makespan_s == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("the Chrome trace parses and every event is well formed", "[sim][trace]") {
  Problem problem = full_forward(4096);
  problem.pass = Pass::both;
  auto simulated = run("mesh", problem, 4, topo::build_switch(4, 50e9, 1e-6), sim::Fidelity::flow);
  std::stringstream text;
  sim::write_chrome_trace(text, simulated.schedule, simulated.result);
  auto trace = nlohmann::json::parse(text.str());
  REQUIRE(trace["traceEvents"].is_array());
  size_t complete_events = 0;
  for (const auto& event : trace["traceEvents"]) {
    REQUIRE(event.contains("ph"));
    REQUIRE(event.contains("pid"));
    REQUIRE(event.contains("name"));
    if (event["ph"] == "X") {
      ++complete_events;
      CHECK(event["ts"].get<double>() >= 0);
      CHECK(event["dur"].get<double>() >= 0);
      CHECK(event["ts"].get<double>() + event["dur"].get<double>() <= simulated.result.makespan_s * 1e6 * (1 + 1e-12));
    }
  }
  CHECK(complete_events == simulated.schedule.ops.size());
}

TEST_CASE("a schedule's all-gather runs the ring algorithm", "[sim][collective]") {
  // Llama-3 all-gather of K/V over P GPUs on a switch with no latency: P - 1 ring steps, each
  // moving one K/V chunk (N/P tokens x G heads x (d + d_v) x 2 bytes) at the link bandwidth.
  const int32_t gpus = 8;
  const double bandwidth = 10e9;
  Problem problem = full_forward(8192);
  auto simulated = run("all-gather", problem, gpus, topo::build_switch(gpus, bandwidth, 0), sim::Fidelity::flow);
  const double chunk_bytes = 1024.0 * 8 * (64 + 64) * 2;
  for (size_t index = 0; index < simulated.schedule.ops.size(); ++index) {
    if (simulated.schedule.ops[index].kind != OpKind::collective) continue;
    CHECK(simulated.result.op_finish_s[index] - simulated.result.op_start_s[index] ==
          Approx((gpus - 1) * chunk_bytes / bandwidth).epsilon(1e-12));
  }
  // Every GPU received the other seven chunks, so the bound is at least their time in.
  CHECK(simulated.result.gpus[0].received_bytes == Approx(7 * chunk_bytes));
  CHECK(simulated.result.makespan_s >= simulated.result.lower_bound_s);
}

TEST_CASE("a schedule's all-gather and a standalone all-gather run the same ring", "[sim][collective]") {
  // 8 GPUs on a switch of 10 GB/s links with 3 us latency, no per-message costs. The schedule's
  // all-gather gathers one K/V chunk from every GPU; the standalone one gathers 8 such chunks
  // (nccl-tests counts the gathered output). Both are 7 ring steps, each one chunk through the
  // switch (two links, so twice the latency): 7 (c / B + 6 us).
  const int32_t gpus = 8;
  const double bandwidth = 10e9, latency_s = 3e-6;
  const topo::Topology star = topo::build_switch(gpus, bandwidth, latency_s);
  const double chunk_bytes = 1024.0 * 8 * (64 + 64) * 2;
  const std::vector<int32_t> placement = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto standalone =
      sim::simulate_collective(CollectiveKind::all_gather, gpus * chunk_bytes, star, placement, sim::Fidelity::flow);
  CHECK(standalone.makespan_s == Approx((gpus - 1) * (chunk_bytes / bandwidth + 2 * latency_s)).epsilon(1e-12));
  auto simulated = run("all-gather", full_forward(8192), gpus, star, sim::Fidelity::flow);
  size_t collectives = 0;
  for (size_t index = 0; index < simulated.schedule.ops.size(); ++index) {
    if (simulated.schedule.ops[index].kind != OpKind::collective) continue;
    ++collectives;
    CHECK(simulated.result.op_finish_s[index] - simulated.result.op_start_s[index] ==
          Approx(standalone.makespan_s).epsilon(1e-12));
  }
  CHECK(collectives == static_cast<size_t>(gpus));
}

TEST_CASE("chunked messages pay latency per chunk", "[sim][chunks]") {
  // A 2-GPU forward ring sends one K/V chunk; split into 4 chunks on a 1-hop-latency path it
  // takes 4 (alpha + c / B) instead of alpha + 4c / B: 3 alpha more.
  Problem problem = full_forward(2048);
  topo::Topology pair = topo::build_ring(2, 10e9, 1e-3, true);
  GeneratorOptions options;
  options.gpus = 2;
  options.layout = Layout::contiguous;
  const CheckedSchedule checked = schedules::check(generate_schedule("ring", problem, options));
  const Schedule& schedule = checked.schedule();
  const double message_bytes = 1024.0 * 8 * 128 * 2;
  sim::SimOptions whole, chunked;
  whole.set_message_costs(MessageCosts::none());  // latency here is the link's alone
  chunked.set_message_costs(MessageCosts::none());
  chunked.chunk_bytes = message_bytes / 4;
  auto a = sim::simulate(checked, pair, {0, 1}, sim::GpuProfile{}, whole);
  auto b = sim::simulate(checked, pair, {0, 1}, sim::GpuProfile{}, chunked);
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    if (schedule.ops[index].kind != OpKind::recv) continue;
    double whole_s = a.op_finish_s[index] - a.op_start_s[index];
    double chunked_s = b.op_finish_s[index] - b.op_start_s[index];
    CHECK(whole_s == Approx(1e-3 + message_bytes / 10e9).epsilon(1e-12));
    CHECK(chunked_s == Approx(4e-3 + message_bytes / 10e9).epsilon(1e-12));
  }
}

TEST_CASE("a pipelined tree all-reduce on a switch", "[sim][collective]") {
  // 3 ranks (root 0, children 1 and 2) on a non-blocking switch, no latency, c chunks of S/c.
  // Up: both children send chunk k to the root at once (two different uplinks, one downlink
  // into the root shared: each at B/2), so each up-step takes (S/c)/(B/2). Down: the root
  // sends chunk k to both children through its one uplink, again B/2 each. The phases overlap
  // only across different links: up uses child uplinks + root downlink, down uses root uplink +
  // child downlinks, so chunk k can go down while chunk k+1 goes up: c up-steps, then one more
  // down-step: (c + 1) (S/c) / (B/2).
  const double bytes = 1e9, bandwidth = 1e9;
  const int32_t chunks = 4;
  topo::Topology star = topo::build_switch(3, bandwidth, 0);
  auto result = sim::simulate_collective(CollectiveKind::all_reduce, bytes, star, {0, 1, 2},
                                         sim::Fidelity::flow, sim::AllReduceShape::tree, chunks);
  CHECK(result.makespan_s == Approx((chunks + 1) * (bytes / chunks) / (bandwidth / 2)).epsilon(1e-12));
  CHECK_THROWS(sim::simulate_collective(CollectiveKind::all_gather, bytes, star, {0, 1, 2},
                                        sim::Fidelity::flow, sim::AllReduceShape::tree));
}

TEST_CASE("one channel per GPU serialises its transfers", "[sim][channels]") {
  // Ulysses on 3 GPUs through a switch: each all-to-all sends 2 messages of m bytes out of and
  // into every GPU. Unlimited, each link carries two flows at B/2: 2 m / B. With one channel,
  // messages wait in FIFO order at their source (0->1, 0->2, 1->0, 1->2, 2->0, 2->1): round 1
  // runs 0->1 and 1->0 (2->0 waits for GPU 0's receive channel), round 2 runs 0->2 and 2->0,
  // round 3 runs 1->2 and 2->1: 3 m / B, 1.5 times the unlimited time (head-of-line blocking).
  topo::Topology star = topo::build_switch(3, 1e9, 0);
  Problem problem = full_forward(3 * 1024);
  GeneratorOptions options;
  options.gpus = 3;
  options.layout = Layout::contiguous;
  problem.heads = 3;
  problem.kv_heads = 3;
  const CheckedSchedule checked = schedules::check(generate_schedule("ulysses", problem, options));
  const Schedule& schedule = checked.schedule();
  sim::SimOptions unlimited, one;
  unlimited.set_message_costs(MessageCosts::none());  // bandwidth alone sets the 1.5 ratio
  one.set_message_costs(MessageCosts::none());
  one.channels = 1;
  auto a = sim::simulate(checked, star, {0, 1, 2}, sim::GpuProfile{}, unlimited);
  auto b = sim::simulate(checked, star, {0, 1, 2}, sim::GpuProfile{}, one);
  auto c = sim::simulate(checked, star, {0, 1, 2}, sim::GpuProfile{}, one);
  CHECK(b.makespan_s >= a.makespan_s);
  CHECK(b.makespan_s == c.makespan_s);
  for (size_t index = 0; index < schedule.ops.size(); ++index)
    if (schedule.ops[index].kind == OpKind::collective)
      CHECK(b.op_finish_s[index] - b.op_start_s[index] ==
            Approx(1.5 * (a.op_finish_s[index] - a.op_start_s[index])).epsilon(1e-9));
}

TEST_CASE("the simulation is deterministic bit for bit", "[sim]") {
  Problem problem = full_forward(1 << 14);
  problem.pass = Pass::both;
  problem.mask.kind = MaskKind::causal;
  topo::HierarchicalSpec spec;
  spec.nodes = 2;
  spec.gpus_per_node = 4;
  spec.nics_per_node = 2;
  topo::Topology cluster = topo::build_hierarchical(spec);
  auto first = run("mesh", problem, 8, cluster, sim::Fidelity::flow);
  auto second = run("mesh", problem, 8, cluster, sim::Fidelity::flow);
  CHECK(first.result.op_finish_s == second.result.op_finish_s);
  CHECK(first.result.makespan_s == second.result.makespan_s);
}

TEST_CASE("a calibration file replaces the profile's figures", "[sim][calibration]") {
  std::ofstream(scratch_path("sim_test_calibration.json")) << R"({"gpu": "a100", "max_efficiency": 0.5, "launch_overhead_s": 1e-5})";
  sim::GpuProfile profile = sim::read_calibration(scratch_path("sim_test_calibration.json"));
  CHECK(profile.max_efficiency == 0.5);
  CHECK(profile.launch_overhead_s == 1e-5);
  CHECK(profile.peak_flops_per_s_16bit == 312e12);  // A100 figure kept
  std::ofstream(scratch_path("sim_test_bad_calibration.json")) << R"({"max_efficiency": -1})";
  CHECK_THROWS_WITH(sim::read_calibration(scratch_path("sim_test_bad_calibration.json")), Catch::Contains("max_efficiency"));
}

// One rank's ring over a single block of 256 tokens, 2 heads, d = 64, both passes.
static Schedule one_block_schedule(MaskKind mask) {
  Problem problem;
  problem.seq_len = 256;
  problem.heads = problem.kv_heads = 2;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = mask;
  problem.pass = Pass::both;
  GeneratorOptions options;
  options.gpus = 1;
  return generate_schedule("ring", problem, options);
}

TEST_CASE("a backward rate ratio scales backward block times only", "[sim][calibration]") {
  // One full block of 256 tokens, 2 heads, d = 64: forward 4 x 256^2 x 64 x 2 FLOPs, backward
  // 2.5x that. With efficiency 1 (half_efficiency_tokens -> 0 is not allowed, so a tiny value)
  // and no launch overhead, times are FLOPs / (peak x ratio).
  Schedule schedule = one_block_schedule(MaskKind::full);
  BlockGrid grid(schedule.problem, schedule.layout, 1);
  sim::GpuProfile gpu;
  gpu.peak_flops_per_s_16bit = 1e12;
  gpu.max_efficiency = 1;
  gpu.half_efficiency_tokens = 1e-9;
  gpu.launch_overhead_s = 0;
  gpu.backward_rate_ratio = 2;
  const double forward_flops = 4.0 * 256 * 256 * 64 * 2;
  for (const Op& op : schedule.ops) {
    if (op.kind != OpKind::compute) continue;
    const double expected = op.pass == Pass::forward ? forward_flops / 1e12 : 2.5 * forward_flops / (1e12 * 2);
    CHECK(sim::op_compute_s(schedule, grid, op, gpu) == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("a calibrated masked pair cost charges a diagonal block its masked pairs and whole rows", "[sim][calibration]") {
  // One causal block of 256 tokens (one rank), 2 heads, d = 64: 256 x 257 / 2 = 32896 visible
  // pairs, 256 x 255 / 2 = 32640 masked ones, 4 x 64 x 2 = 512 forward FLOPs per pair (2.5x
  // backward). Peak 1e12, max efficiency 0.5, half 32 tokens, launch 1 us, backward ratio 2.
  Schedule schedule = one_block_schedule(MaskKind::causal);
  BlockGrid grid(schedule.problem, schedule.layout, 1);
  sim::GpuProfile gpu;
  gpu.peak_flops_per_s_16bit = 1e12;
  gpu.max_efficiency = 0.5;
  gpu.half_efficiency_tokens = 32;
  gpu.launch_overhead_s = 1e-6;
  gpu.backward_rate_ratio = 2;
  const double visible = 32896, masked = 32640, per_pair = 512;
  for (const Op& op : schedule.ops) {
    if (op.kind != OpKind::compute) continue;
    const double flops = op.pass == Pass::forward ? per_pair : 2.5 * per_pair;
    const double rate = op.pass == Pass::forward ? 1e12 * 0.5 : 1e12 * 0.5 * 2;
    // Vendor profile: the visible pairs at the block's efficiency 256 / (256 + 32).
    gpu.block_model.reset();
    CHECK(sim::op_compute_s(schedule, grid, op, gpu) == Approx(visible * flops / (rate * 256.0 / 288.0) + 1e-6).epsilon(1e-12));
    // Calibrated: masked pairs at 0.1 (forward) or 0.02 (backward) of a visible one, and the
    // rows' work of the whole 256 x 256 area: 256^2 x half / 256 pairs' worth, half 32 forward
    // and 8 backward.
    gpu.block_model = sim::GpuProfile::BlockModel{0.1, 0.02, 8};
    const double cost = op.pass == Pass::forward ? 0.1 : 0.02, half = op.pass == Pass::forward ? 32 : 8;
    const double expected = (visible + cost * masked + 256.0 * half) * flops / rate + 1e-6;
    CHECK(sim::op_compute_s(schedule, grid, op, gpu) == Approx(expected).epsilon(1e-12));
  }
  // A full forward block: the calibrated model is the efficiency model.
  Schedule full = one_block_schedule(MaskKind::full);
  BlockGrid full_grid(full.problem, full.layout, 1);
  for (const Op& op : full.ops) {
    if (op.kind != OpKind::compute || op.pass != Pass::forward) continue;
    gpu.block_model.reset();
    const double vendor = sim::op_compute_s(full, full_grid, op, gpu);
    gpu.block_model = sim::GpuProfile::BlockModel{0.1, 0.02, 8};
    CHECK(sim::op_compute_s(full, full_grid, op, gpu) == Approx(vendor).epsilon(1e-12));
  }
}

TEST_CASE("a cancel flag stops a running simulation", "[sim][cancel]") {
  Problem problem;
  problem.seq_len = 64 * 1024;
  problem.heads = problem.kv_heads = 8;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::causal;
  problem.pass = Pass::both;
  GeneratorOptions options;
  options.gpus = 64;
  const CheckedSchedule checked = schedules::check(generate_schedule("ring", problem, options));
  topo::Topology topology = topo::build_switch(64, 50e9, 1e-6);
  std::vector<int32_t> placement(64);
  for (int32_t rank = 0; rank < 64; ++rank) placement[static_cast<size_t>(rank)] = rank;
  std::atomic<bool> cancel{false};
  sim::SimOptions sim_options;
  sim_options.cancel = &cancel;
  // Not set: the run completes (and has enough events for the flag to be looked at).
  sim::SimResult result = sim::simulate(checked, topology, placement, sim::gpu_profile("h100"), sim_options);
  REQUIRE(result.events > 4096);
  cancel = true;
  CHECK_THROWS_AS(sim::simulate(checked, topology, placement, sim::gpu_profile("h100"), sim_options),
                  sim::SimulationCancelled);
}
