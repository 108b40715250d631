// The analytical model's time floor (costmodel/time_floor.hpp): a hand-worked ring, where the
// floor is the busiest stream's own work in closed form, and every candidate a plan ranks,
// where it must never be above the time cost_schedule gives the checked schedule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/costmodel/time_floor.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/core/error.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/routed_network.hpp"

#include "common/problems.hpp"
#include "common/small_candidates.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

GeneratedSchedule ring_of(const Problem& problem, int32_t gpus) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = Layout::contiguous;
  return generate_unchecked("ring", problem, options);
}

}  // namespace

TEST_CASE("a full-mask ring's floor is its compute, or its KV transfers, in closed form", "[time_floor]") {
  // n GPUs, chunks of c = N / n tokens: each GPU computes n blocks of c^2 pairs, 2 c^2 (d + d_v)
  // FLOPs per head for each of the 32 heads, and receives n - 1 KV chunks of 2 c H_kv d bytes
  // each in bf16, one after another on its receive stream.
  const int64_t seq = 32768;
  for (int32_t n : {2, 4, 8}) {
    const double c = static_cast<double>(seq) / n;
    const Problem problem = test::mha_full_forward(seq);
    const GeneratedSchedule ring = ring_of(problem, n);
    const double block_flops = 32 * 2.0 * c * c * (128 + 128);
    const double kv_bytes = 2.0 * c * 32 * 128 * 2;

    Hardware fast_links;  // compute-bound: the busiest stream is the compute stream
    fast_links.link_bytes_per_s = 1e18;
    const double compute_s = n * (block_flops / fast_links.effective_flops_per_s() + fast_links.kernel_launch_s);
    const TimeFloor compute_floor = analytic_time_floor(ring.schedule, *ring.grid, fast_links, true);
    CHECK(compute_floor.seconds == Approx(compute_s).epsilon(1e-12));
    CHECK(compute_floor.source == TimeFloor::Source::stream);
    // Every GPU alike: the first one found, GPU 0, is named.
    CHECK_THAT(compute_floor.describe(), Catch::StartsWith("stream ") && Catch::EndsWith(" of GPU 0"));

    Hardware slow_links;  // bandwidth-bound: the receive (or send) stream's n - 1 transfers
    slow_links.link_bytes_per_s = 1e8;
    const double transfer_s = slow_links.link_latency_s + kv_bytes / slow_links.link_bytes_per_s +
                              slow_links.message.message_s(PathClass::network);
    const TimeFloor transfer_floor = analytic_time_floor(ring.schedule, *ring.grid, slow_links, true);
    CHECK(transfer_floor.seconds == Approx((n - 1) * transfer_s).epsilon(1e-12));
    // On a topology the transfers are not priced before the check: compute alone.
    CHECK(analytic_time_floor(ring.schedule, *ring.grid, slow_links, false).seconds ==
          Approx(n * (block_flops / slow_links.effective_flops_per_s() + slow_links.kernel_launch_s)).epsilon(1e-12));
  }
}

TEST_CASE("an all-gather's floor on slow links is its collective, priced as the model prices one", "[time_floor]") {
  // Each of n GPUs receives the n - 1 other KV chunks of 2 c H_kv d bf16 bytes one after another,
  // each paying the link latency and the network path's per-step latency, and the collective its
  // overhead once; the compute waits for it on another stream, so the collective is the floor.
  const int64_t seq = 32768;
  for (int32_t n : {2, 4, 8}) {
    const double c = static_cast<double>(seq) / n;
    GeneratorOptions options;
    options.gpus = n;
    options.layout = Layout::contiguous;
    const GeneratedSchedule gather = generate_unchecked("all-gather", test::mha_full_forward(seq), options);
    Hardware slow_links;
    slow_links.link_bytes_per_s = 1e8;
    const double piece_s = slow_links.link_latency_s + 2.0 * c * 32 * 128 * 2 / slow_links.link_bytes_per_s +
                           slow_links.message.latency_s(PathClass::network);
    const TimeFloor floor = analytic_time_floor(gather.schedule, *gather.grid, slow_links, true);
    CHECK(floor.seconds == Approx((n - 1) * piece_s + slow_links.message.overhead_s).epsilon(1e-12));
    CHECK(floor.source == TimeFloor::Source::stream);
  }
}

TEST_CASE("no candidate's analytical time is below its floor", "[time_floor]") {
  const Hardware hardware;
  test::for_each_small_candidate({2, 0}, [&](const test::SmallCandidate& small) {
    const GeneratedSchedule& generated = small.generated;
    const GeneratorOptions& options = small.candidate.options;
    const TimeFloor floor = analytic_time_floor(generated.schedule, *generated.grid, hardware, true);
    const TimeFloor compute_floor = analytic_time_floor(generated.schedule, *generated.grid, hardware, false);
    const CheckedSchedule checked = check_generated(generated, small.candidate.algorithm, options);
    INFO(checked.schedule().name() << " on " << small.gpus << " GPUs, buffers " << options.buffers << ", rotation "
                                   << options.by_rotation);
    CHECK(floor.seconds > 0);
    CHECK(floor.seconds <= cost_schedule(checked, hardware).time_s * (1 + 1e-12));
    CHECK(compute_floor.seconds <= floor.seconds);
    if (options.by_rotation) return;  // a routed network prices every GPU's programs
    const topo::Topology topology = topo::load_topology("h100-ib:" + std::to_string(std::max(small.gpus / 8, 1)));
    std::vector<int32_t> placement(static_cast<size_t>(small.gpus));
    for (int32_t rank = 0; rank < small.gpus; ++rank) placement[static_cast<size_t>(rank)] = rank;
    const topo::RoutedNetwork routed(topology, placement);
    CHECK(compute_floor.seconds <= cost_schedule(checked, hardware, &routed).time_s * (1 + 1e-12));
  });
}
