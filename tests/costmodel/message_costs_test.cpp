// Per-message and per-kernel costs are on by default in the analytical model (issue 14): every
// point-to-point message pays NCCL's overhead and its path's latency on top of the wire, every
// block kernel a launch. Expected values are closed forms built from the published figures
// (cost.hpp, network_model.hpp), not read from the program.
#include <catch2/catch.hpp>

#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

// MHA forward, full mask, 32 heads of d = 128, bf16: one KV chunk of m tokens is m x 32 x 256 x 2 B.
Problem mha_forward(int64_t seq_len) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = problem.kv_heads = 32;
  problem.head_dim = problem.head_dim_v = 128;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  return problem;
}

double ring_time_s(const Problem& problem, int32_t gpus, const Hardware& hardware) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = Layout::contiguous;
  Schedule schedule = generate_schedule("ring", problem, options);
  BlockGrid grid(problem, Layout::contiguous, gpus);
  CheckResult check = check_schedule(schedule, grid);
  INFO(check.violation);
  REQUIRE(check.ok());
  return cost_schedule(schedules::check(schedule), hardware).time_s;
}

}  // namespace

TEST_CASE("the default figures are NCCL's and a measured kernel launch", "[time][overheads]") {
  // network_model.hpp: NCCL 2.30 tuning.cc, Ring/Simple; cost.hpp: cuLaunchKernel, 3.0 us.
  const Hardware hardware;
  CHECK(hardware.message.overhead_s == 8.4e-6);
  CHECK(hardware.message.nvlink_latency_s == 3.4e-6);
  CHECK(hardware.message.network_latency_s == 14.0e-6);
  CHECK(hardware.kernel_launch_s == 3e-6);
  CHECK(hardware.message.message_s(PathClass::local) == 0);
  CHECK(hardware.message.message_s(PathClass::nvlink) == Approx(8.4e-6 + 3.4e-6).epsilon(1e-12));
  CHECK(hardware.message.message_s(PathClass::network) == Approx(8.4e-6 + 14.0e-6).epsilon(1e-12));
}

TEST_CASE("a ring step pays one message's costs and each block a launch", "[time][overheads]") {
  // Two GPUs: each computes its diagonal block while the other KV chunk arrives, then the
  // second block: time = max(block, transfer) + block, where a block is its FLOPs over the
  // effective rate plus one launch and the transfer is the link's latency, NCCL's overhead and
  // network latency (the uniform network is a network path) and the bytes over bandwidth.
  const Problem problem = mha_forward(4096);
  const Hardware hardware;
  const double block_s = 4.0 * 2048 * 2048 * 128 * 32 / (0.6 * 989e12) + 3e-6;
  const double transfer_s = 5e-6 + 8.4e-6 + 14.0e-6 + 2048.0 * 32 * 256 * 2 / 50e9;
  CHECK(ring_time_s(problem, 2, hardware) == Approx(std::max(block_s, transfer_s) + block_s).epsilon(1e-12));
}

TEST_CASE("n transfers in series cost n (overhead + latency) + bytes / bandwidth", "[time][overheads]") {
  // A communication-bound ring of 4 GPUs at 1 GB/s: each GPU forwards the chunk it has just
  // received, so the 3 transfers run one after another and the last block follows them:
  // 3 (overhead + network latency + link latency) + 3 chunk / bandwidth + block.
  const Problem problem = mha_forward(4 * 1024);
  Hardware hardware;
  hardware.link_bytes_per_s = 1e9;
  const double chunk_bytes = 1024.0 * 32 * 256 * 2;
  const double block_s = 4.0 * 1024 * 1024 * 128 * 32 / (0.6 * 989e12) + 3e-6;
  const double expected_s = 3 * (8.4e-6 + 14.0e-6 + 5e-6) + 3 * chunk_bytes / 1e9 + block_s;
  CHECK(ring_time_s(problem, 4, hardware) == Approx(expected_s).epsilon(1e-9));
  // Zero overheads (the flags at 0) give the wire alone.
  hardware.kernel_launch_s = 0;
  hardware.message = MessageCosts::none();
  CHECK(ring_time_s(problem, 4, hardware) ==
        Approx(3 * (5e-6 + chunk_bytes / 1e9) + 4.0 * 1024 * 1024 * 128 * 32 / (0.6 * 989e12)).epsilon(1e-9));
}

TEST_CASE("transfers that share a GPU's link queue for it", "[time][links]") {
  // GPU 0 sends Q[0] and KV[0] to GPU 1 at once, on two streams; GPU 1 computes all four
  // blocks and returns O[0] with its LSE, which GPU 0 merges. The two inbound transfers share
  // GPU 1's link in, so the blocks start once both sets of bytes have crossed it, one after the
  // other, plus one message's fixed costs (their latencies overlap):
  //   (Q + KV) / bw + fixed, + 4 blocks, + (O + LSE) / bw + fixed, + the merge.
  const Problem problem = mha_forward(2048);
  ScheduleBuilder builder("hand", "shared link", problem, Layout::contiguous, 2);
  const int32_t compute = builder.stream("compute"), first = builder.stream("first"), second = builder.stream("second");
  builder.send(0, first, 1, {DataItem{DataKind::Q, 0, 0}});
  builder.send(0, second, 1, {DataItem{DataKind::KV, 0, 0}});
  builder.recv(1, first, 0, {DataItem{DataKind::Q, 0, 0}});
  builder.recv(1, second, 0, {DataItem{DataKind::KV, 0, 0}});
  const BlockRef blocks[] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}};
  builder.compute(1, Pass::forward, blocks, compute);
  builder.send(1, first, 0, {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}});
  builder.recv(0, first, 1, {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}});
  builder.merge(0, compute, {DataItem{DataKind::O, 0, 0}, DataItem{DataKind::LSE, 0, 0}});
  const Schedule schedule = builder.finish();
  const BlockGrid grid(problem, Layout::contiguous, 2);
  const CheckResult check = check_schedule(schedule, grid);
  INFO(check.violation);
  REQUIRE(check.ok());

  const Hardware hardware;
  const double q_bytes = 1024.0 * 32 * 128 * 2, kv_bytes = 2 * q_bytes;
  const double o_bytes = q_bytes, lse_bytes = 1024.0 * 32 * 4;
  const double fixed_s = 5e-6 + 8.4e-6 + 14.0e-6;  // link latency, NCCL overhead, network latency
  const double blocks_s = 4 * (4.0 * 1024 * 1024 * 128 * 32 / (0.6 * 989e12) + 3e-6);
  const double merge_s = 3 * (o_bytes + lse_bytes) / 3.35e12;
  const double expected_s =
      (q_bytes + kv_bytes) / 50e9 + fixed_s + blocks_s + (o_bytes + lse_bytes) / 50e9 + fixed_s + merge_s;
  CHECK(cost_schedule(schedules::check(schedule), hardware).time_s == Approx(expected_s).epsilon(1e-9));
}
