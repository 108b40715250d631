// The analytical model with ranks sharing devices (cost.hpp, time_on_shared_devices_s): a
// device is busy for its ranks' summed compute over the concurrency speedup.
#include <catch2/catch.hpp>

#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::costmodel;

TEST_CASE("analytical time: 4 ranks on 1 device take 4 ranks' compute, on 2 devices half", "[costmodel][devices]") {
  // A forward ring of 4 ranks, full mask, on a network fast enough that compute decides: each
  // rank computes 4 equal blocks of F = 4 m^2 d H FLOPs (m = N / 4) at the effective rate, plus
  // a launch each.
  Problem problem;
  problem.seq_len = 4096;
  problem.heads = problem.kv_heads = 8;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::full;
  problem.pass = Pass::forward;
  schedules::GeneratorOptions options;
  options.gpus = 4;
  options.layout = Layout::contiguous;
  Hardware hardware;
  hardware.link_bytes_per_s = 1e15;
  hardware.link_latency_s = 0;
  hardware.message = MessageCosts::none();
  const CostReport report = cost_schedule(schedules::generate_checked("ring", problem, options), hardware);
  const double m = 1024, block_s = 4 * m * m * 64 * 8 / hardware.effective_flops_per_s() + hardware.kernel_launch_s;
  REQUIRE(report.gpus[0].compute_s == Approx(4 * block_s).epsilon(1e-9));
  CHECK(time_on_shared_devices_s(report, {0, 0, 0, 0}, {}) == Approx(16 * block_s).epsilon(1e-9));
  CHECK(time_on_shared_devices_s(report, {0, 0, 1, 1}, {}) == Approx(8 * block_s).epsilon(1e-9));
  // A device whose 4 concurrent blocks deliver 2.5x one block's throughput: 16 / 2.5 blocks.
  CHECK(time_on_shared_devices_s(report, {0, 0, 0, 0}, {1, 1.8, 2.2, 2.5}) == Approx(16 * block_s / 2.5).epsilon(1e-9));
  // One rank per device: the schedule's own time.
  CHECK(time_on_shared_devices_s(report, {0, 1, 2, 3}, {}) == report.time_s);
}
