// The simulator's time floor (sim/time_bound.hpp): a hand-worked ring whose floor is its
// compute stream's blocks, and every candidate a plan ranks, on the uniform network and on
// servers of NVLink behind InfiniBand, where no simulated makespan may fall below it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/sim/time_bound.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/placement.hpp"

#include "common/problems.hpp"
#include "common/small_candidates.hpp"

using namespace tessera;
using namespace tessera::schedules;

TEST_CASE("a ring's simulated floor is the sum of its blocks as the GPU profile prices them", "[time_floor]") {
  // Full mask, contiguous, forward: each GPU computes n blocks of c x c pairs on one stream, so
  // the floor on links too fast to matter is n block times of the profile.
  const Problem problem = test::mha_full_forward(32768);
  const sim::GpuProfile gpu = sim::gpu_profile("h100");
  for (const int32_t n : {2, 4, 8}) {
    GeneratorOptions options;
    options.gpus = n;
    options.layout = Layout::contiguous;
    const GeneratedSchedule ring = generate_unchecked("ring", problem, options);
    const double c = static_cast<double>(problem.seq_len) / n;
    const double block_flops = 32 * 2.0 * c * c * (128 + 128);
    const double block_s = sim::block_compute_s(gpu, problem.dtype, Pass::forward, c, c, block_flops, block_flops);
    costmodel::Hardware fast;
    fast.link_bytes_per_s = 1e18;
    const topo::Topology uniform = scenario::uniform_topology(n, fast);
    CHECK(sim::simulated_time_floor(ring.schedule, *ring.grid, uniform, gpu, false).seconds ==
          Approx(n * block_s).epsilon(1e-12));
    // Slow links: each GPU's n - 1 KV chunks of 2 c H d bf16 bytes over its one link in.
    costmodel::Hardware slow;
    slow.link_bytes_per_s = 1e8;
    const topo::Topology thin = scenario::uniform_topology(n, slow);
    const costmodel::TimeFloor through_links = sim::simulated_time_floor(ring.schedule, *ring.grid, thin, gpu, false);
    CHECK(through_links.seconds == Approx((n - 1) * 2.0 * c * 32 * 128 * 2 / 1e8).epsilon(1e-12));
    CHECK(through_links.describe() == "the links into GPU 0");
    CHECK(sim::simulated_time_floor(ring.schedule, *ring.grid, thin, gpu, true).seconds == Approx(n * block_s).epsilon(1e-12));
  }
}

TEST_CASE("no candidate's simulated makespan is below its floor", "[time_floor]") {
  const sim::GpuProfile gpu = sim::gpu_profile("h100");
  test::for_each_small_candidate({2}, [&](const test::SmallCandidate& small) {
    const int32_t gpus = small.gpus;
    const GeneratedSchedule& generated = small.generated;
    const topo::Topology uniform = scenario::uniform_topology(gpus, costmodel::Hardware{});
    const topo::Topology servers = topo::load_topology("h100-ib:" + std::to_string(gpus / 4));
    const double on_uniform = sim::simulated_time_floor(generated.schedule, *generated.grid, uniform, gpu, false).seconds;
    const double on_servers = sim::simulated_time_floor(generated.schedule, *generated.grid, servers, gpu, false).seconds;
    const CheckedSchedule checked = check_generated(generated, small.candidate.algorithm, small.candidate.options);
    INFO(checked.schedule().name() << " on " << gpus << " GPUs, rotation " << small.candidate.options.by_rotation);
    CHECK(on_uniform > 0);
    CHECK(on_uniform <=
          sim::simulate(checked, uniform, topo::order_ranks(uniform, gpus, "linear"), gpu, {}).makespan_s * (1 + 1e-12));
    if (small.candidate.options.by_rotation) return;  // servers of 8 break a period of fewer GPUs
    // Twice the GPUs the ranks need: packed into the first servers, or spread over all.
    for (const char* placement : {"linear", "round-robin"})
      CHECK(on_servers <=
            sim::simulate(checked, servers, topo::order_ranks(servers, gpus, placement), gpu, {}).makespan_s * (1 + 1e-12));
  });
}
