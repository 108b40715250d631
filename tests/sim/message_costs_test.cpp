// Per-message and per-kernel costs in the simulator (issue 14), on by default: a point-to-point
// message pays NCCL's overhead and its path's latency (NVLink inside a server, the network
// when it leaves one) on top of the route's link latencies and bytes over its narrowest link;
// a collective pays the overhead once and each algorithm step its path's latency; a calibration
// file replaces the figures. Expected values are closed forms from the published figures.
#include <catch2/catch.hpp>

#include <fstream>

#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/overheads.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/routing.hpp"

#include "common/scratch.hpp"

using namespace tessera;
using namespace tessera::schedules;
using test_support::scratch_path;

namespace {

Problem kv_problem(int64_t seq_len) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = problem.kv_heads = 8;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  return problem;
}

CheckedSchedule checked(const std::string& algorithm, const Problem& problem, int32_t gpus) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = Layout::contiguous;
  return schedules::check(generate_schedule(algorithm, problem, options));
}

// Durations of the receive ops (a receive lasts from its posting to its data's arrival).
std::vector<double> receive_durations(const CheckedSchedule& run, const sim::SimResult& result) {
  std::vector<double> durations;
  for (size_t index = 0; index < run.schedule().ops.size(); ++index)
    if (run.schedule().ops[index].kind == OpKind::recv)
      durations.push_back(result.op_finish_s[index] - result.op_start_s[index]);
  return durations;
}

}  // namespace

TEST_CASE("the simulator's defaults are NCCL's per-message costs and a measured launch", "[sim][overheads]") {
  const sim::SimOptions options;
  CHECK(options.message_overhead_s == 8.4e-6);
  CHECK(options.nvlink_message_latency_s == 3.4e-6);
  CHECK(options.network_message_latency_s == 14.0e-6);
  for (const auto& profile : sim::gpu_profiles()) CHECK(profile.launch_overhead_s == 3e-6);
}

TEST_CASE("n messages in series cost n (overhead + latency) + bytes / bandwidth", "[sim][overheads]") {
  // A 2-GPU forward ring sends one K/V chunk (1024 tokens x 8 heads x 128 x 2 B) over a generic
  // link of 1 ms and 10 GB/s (a network path). Whole: one message; in 4 chunks: 4 messages one
  // after another, each paying the link latency, NCCL's overhead and its network latency.
  const CheckedSchedule run = checked("ring", kv_problem(2048), 2);
  const topo::Topology pair = topo::build_ring(2, 10e9, 1e-3, true);
  const double message_bytes = 1024.0 * 8 * 128 * 2;
  const double per_message_s = 1e-3 + 8.4e-6 + 14.0e-6;
  sim::SimOptions whole, chunked;
  chunked.chunk_bytes = message_bytes / 4;
  for (double seconds : receive_durations(run, sim::simulate(run, pair, {0, 1},
                                                             sim::GpuProfile{}, whole)))
    CHECK(seconds == Approx(per_message_s + message_bytes / 10e9).epsilon(1e-12));
  for (double seconds : receive_durations(run, sim::simulate(run, pair, {0, 1},
                                                             sim::GpuProfile{}, chunked)))
    CHECK(seconds == Approx(4 * per_message_s + message_bytes / 10e9).epsilon(1e-12));
}

TEST_CASE("a message inside a server pays the NVLink latency, one leaving it the network's", "[sim][overheads]") {
  // Two servers of two GPUs. Placed on GPUs 0 and 1 the ring's messages stay on NVLink (two
  // NVLink hops through the NVSwitch); on GPUs 0 and 2 they cross the network. The wire part
  // (the route's link latencies and narrowest link) is the topology's; the message part is
  // NCCL's 8.4 us plus 3.4 us (NVLink) or 14.0 us (network).
  topo::HierarchicalSpec spec;
  spec.nodes = 2;
  spec.gpus_per_node = 2;
  spec.nics_per_node = 2;
  const topo::Topology cluster = topo::build_hierarchical(spec);
  const CheckedSchedule run = checked("ring", kv_problem(2048), 2);
  const double message_bytes = 1024.0 * 8 * 128 * 2;
  topo::Router router(cluster);
  for (const auto& [other, message_s] : {std::pair{1, 8.4e-6 + 3.4e-6}, std::pair{2, 8.4e-6 + 14.0e-6}}) {
    double wire_latency_s = 0, narrowest = 1e300;
    for (int32_t edge : router.route(0, other)) {
      const topo::LinkInfo& link = cluster.link(edge);
      wire_latency_s += link.latency_s;
      narrowest = std::min(narrowest, cluster.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
    }
    const auto result =
        sim::simulate(run, cluster, {0, other}, sim::GpuProfile{}, sim::SimOptions{});
    INFO("ranks on GPUs 0 and " << other);
    for (double seconds : receive_durations(run, result))
      CHECK(seconds == Approx(wire_latency_s + message_s + message_bytes / narrowest).epsilon(1e-12));
  }
}

TEST_CASE("a collective pays the overhead once and each step its latency", "[sim][overheads]") {
  // All-gather of K/V over 8 GPUs on a switch without link latency: 7 ring steps of one chunk
  // each (1024 tokens x 8 heads x 128 x 2 B at 10 GB/s), each paying the network latency, and
  // NCCL's overhead once for the operation.
  const int32_t gpus = 8;
  const CheckedSchedule run = checked("all-gather", kv_problem(8192), gpus);
  const topo::Topology star = topo::build_switch(gpus, 10e9, 0);
  std::vector<int32_t> placement(gpus);
  for (int32_t rank = 0; rank < gpus; ++rank) placement[static_cast<size_t>(rank)] = rank;
  const auto result =
      sim::simulate(run, star, placement, sim::GpuProfile{}, sim::SimOptions{});
  const double chunk_bytes = 1024.0 * 8 * 128 * 2;
  size_t collectives = 0;
  for (size_t index = 0; index < run.schedule().ops.size(); ++index) {
    if (run.schedule().ops[index].kind != OpKind::collective) continue;
    ++collectives;
    CHECK(result.op_finish_s[index] - result.op_start_s[index] ==
          Approx(8.4e-6 + (gpus - 1) * (14.0e-6 + chunk_bytes / 10e9)).epsilon(1e-12));
  }
  CHECK(collectives > 0);
}

TEST_CASE("a calibration file replaces the per-message and launch figures", "[sim][overheads][calibration]") {
  std::ofstream(scratch_path("message_costs_calibration.json"))
      << R"({"gpu": "h100", "launch_overhead_s": 4e-6, "message": {"overhead_s": 2e-6, "network_latency_s": 6e-6}})";
  std::ofstream(scratch_path("message_costs_plain.json")) << R"({"gpu": "h100"})";
  std::ofstream(scratch_path("message_costs_bad.json")) << R"({"message": {"overhead_s": -1}})";
  // The flags' values (here: no per-message costs, a 1 us launch) stand where the file is silent.
  costmodel::Hardware flags;
  flags.kernel_launch_s = 1e-6;
  flags.message = MessageCosts::none();

  sim::GpuProfile gpu = sim::read_calibration(scratch_path("message_costs_calibration.json"));
  sim::SimOptions options;
  sim::apply_overheads(flags, scratch_path("message_costs_calibration.json"), gpu, options);
  CHECK(gpu.launch_overhead_s == 4e-6);
  CHECK(options.message_overhead_s == 2e-6);
  CHECK(options.nvlink_message_latency_s == 0);  // not in the file: the flags'
  CHECK(options.network_message_latency_s == 6e-6);

  gpu = sim::read_calibration(scratch_path("message_costs_plain.json"));
  options = sim::SimOptions{};
  sim::apply_overheads(flags, scratch_path("message_costs_plain.json"), gpu, options);
  CHECK(gpu.launch_overhead_s == 1e-6);   // the file measured none: the flags'
  CHECK(options.message_overhead_s == 0);  // the flags'
  CHECK_FALSE(sim::read_message_calibration(scratch_path("message_costs_plain.json")).has_value());
  CHECK_FALSE(sim::read_launch_calibration(scratch_path("message_costs_plain.json")).has_value());
  // Without a base, fields the file lacks are NCCL's figures.
  CHECK(sim::read_message_calibration(scratch_path("message_costs_calibration.json"))->nvlink_latency_s == 3.4e-6);

  gpu = sim::gpu_profile("a100");
  options = sim::SimOptions{};
  sim::apply_overheads(flags, "", gpu, options);  // no file: the flags
  CHECK(gpu.launch_overhead_s == 1e-6);
  CHECK(options.network_message_latency_s == 0);

  CHECK_THROWS_WITH(sim::read_message_calibration(scratch_path("message_costs_bad.json")), Catch::Contains("message.overhead_s"));
}
