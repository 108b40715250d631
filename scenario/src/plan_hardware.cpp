#include "tessera/scenario/plan_hardware.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/topologies/path_class.hpp"
#include "tessera/topologies/placement.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::scenario {

using schedules::CheckedSchedule;
using schedules::GeneratorOptions;
using schedules::PlanHardware;

namespace {

// The slowest hop of a ring: the narrowest link any hop crosses, the largest fixed cost.
struct RingFigures {
  double bytes_per_s = std::numeric_limits<double>::infinity();
  double latency_s = 0;
};

void add_hop(RingFigures& ring, topo::Router& router, const MessageCosts& message, int32_t src_gpu, int32_t dst_gpu) {
  const topo::Topology& topology = router.topology();
  const auto route = router.route(src_gpu, dst_gpu);
  double latency_s = message.message_s(topo::path_class(topology, route));
  for (int32_t edge : route) {
    const topo::LinkInfo& link = topology.link(edge);
    latency_s += link.latency_s;
    ring.bytes_per_s = std::min(ring.bytes_per_s, link.bytes_per_s);
  }
  ring.latency_s = std::max(ring.latency_s, latency_s);
}

}  // namespace

PlanHardware uniform_plan_hardware(const costmodel::Hardware& hardware) {
  const double hop_latency_s = hardware.link_latency_s + hardware.message.message_s(PathClass::network);
  return PlanHardware{hardware.effective_flops_per_s(), hardware.link_bytes_per_s, hardware.link_bytes_per_s,
                      hop_latency_s, hop_latency_s};
}

PlanHardware ring_plan_hardware(const topo::Topology& topology, const std::vector<int32_t>& placement, TileShape tile,
                                const MessageCosts& message, double flops_per_s) {
  const int32_t a = tile.first, b = tile.second;
  topo::Router router(topology);
  RingFigures q_ring, kv_ring;
  // Rank g = R * a + C sends its Q chunk to R * a + (C + 1) % a and its KV chunk to
  // ((R + 1) % b) * a + C (mesh.cpp); a ring of one rank has no hops.
  for (int32_t rank = 0; rank < a * b; ++rank) {
    const int32_t row = rank / a, column = rank % a;
    const int32_t gpu = placement[static_cast<size_t>(rank)];
    if (a > 1) add_hop(q_ring, router, message, gpu, placement[static_cast<size_t>(row * a + (column + 1) % a)]);
    if (b > 1) add_hop(kv_ring, router, message, gpu, placement[static_cast<size_t>(((row + 1) % b) * a + column)]);
  }
  // A ring without hops (or whose hops stay on one device) is never weighed against compute;
  // any finite figure will do, the other ring's keeps the plan's ratios sensible.
  auto finite = [](RingFigures ring, const RingFigures& other) {
    if (!std::isfinite(ring.bytes_per_s)) ring.bytes_per_s = std::isfinite(other.bytes_per_s) ? other.bytes_per_s : 1e12;
    return ring;
  };
  const RingFigures q = finite(q_ring, kv_ring), kv = finite(kv_ring, q_ring);
  return PlanHardware{flops_per_s, q.bytes_per_s, kv.bytes_per_s, q.latency_s, kv.latency_s};
}

CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem, GeneratorOptions options,
                                 const PlanTarget& target, ScheduleCache* cache, const schedules::GeneratedGate& gate) {
  auto generate = [&](const GeneratorOptions& given) {
    return cache ? cache->generate_checked(algorithm, problem, given)
                 : schedules::generate_checked(algorithm, problem, given);
  };
  // The last generation is the schedule handed back: the one the gate is for.
  auto generate_gated = [&](const GeneratorOptions& given) {
    if (!gate) return generate(given);
    if (!cache) return schedules::generate_checked(algorithm, problem, given, gate);
    CheckedSchedule checked = generate(given);
    gate(checked.schedule(), checked.grid());
    return checked;
  };
  options.plan_hardware = uniform_plan_hardware(target.hardware);
  if (target.flops_per_s) options.plan_hardware.flops_per_s = *target.flops_per_s;
  const bool placed_mesh = algorithm == "mesh" && target.topology != nullptr &&
                           target.topology->gpu_count() >= options.gpus;
  if (!placed_mesh) return generate_gated(options);
  // The tile the generator will take, and the placement it will get.
  const TileShape tile = options.tile.value_or(schedules::choose_mesh_tile(problem, options.gpus));
  std::vector<int32_t> placement = target.ranks;
  if (placement.size() < static_cast<size_t>(options.gpus))
    placement = topo::place_ranks(*target.topology, generate(options), target.placement);
  options.plan_hardware = ring_plan_hardware(*target.topology, placement, tile, target.hardware.message,
                                             options.plan_hardware.flops_per_s);
  return generate_gated(options);
}

}  // namespace tessera::scenario
