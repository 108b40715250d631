#include "rotation_resources.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "tessera/sim/collective_expansion.hpp"
#include "tessera/sim/symmetric_period.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::sim {

namespace {

// Classes of resources by union-find, each root its smallest member.
class ResourceClasses {
 public:
  explicit ResourceClasses(size_t resources) : parent_(resources) { std::iota(parent_.begin(), parent_.end(), 0); }
  int32_t find(int32_t resource) {
    while (parent_[static_cast<size_t>(resource)] != resource) {
      int32_t& up = parent_[static_cast<size_t>(resource)];
      up = parent_[static_cast<size_t>(up)];
      resource = up;
    }
    return resource;
  }
  void join(int32_t a, int32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  }

 private:
  std::vector<int32_t> parent_;
};

// The distinct (source, destination) rank pairs the held programs move data between: a send's
// GPU and its peer; a collective's transfers, or, where it runs as a ring (all-gather,
// reduce-scatter: collective_expansion.hpp), each member and the next. Held at `period`, a
// multiple of the schedule's own, the GPUs held are the schedule's shifted by multiples of its
// period up to `period`, and so are their pairs.
std::set<std::pair<int32_t, int32_t>> held_pairs(const Schedule& schedule, int32_t period) {
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (const Op& op : schedule.ops)
    if (op.kind == OpKind::send) pairs.emplace(op.gpu, op.peer);
  for (const Collective& collective : schedule.collectives) {
    if (runs_as_ring(collective.kind)) {
      const std::vector<int32_t>& members = collective.members;
      for (size_t position = 0; members.size() > 1 && position < members.size(); ++position)
        pairs.emplace(members[position], members[(position + 1) % members.size()]);
      continue;
    }
    for (const Transfer& transfer : collective.transfers) pairs.emplace(transfer.src, transfer.dst);
  }
  std::set<std::pair<int32_t, int32_t>> held;
  for (int32_t shift = 0; shift < period; shift += schedule.period)
    for (const auto& [src, dst] : pairs) held.emplace((src + shift) % schedule.gpus, (dst + shift) % schedule.gpus);
  return held;
}

// Two links the same to a flow and to the cost model: capacity, bandwidth, latency and kind.
bool same_link(const topo::Topology& topology, int32_t a, int32_t b) {
  const topo::LinkInfo &one = topology.link(a), &other = topology.link(b);
  return topology.resource_bytes_per_s[static_cast<size_t>(one.resource)] ==
             topology.resource_bytes_per_s[static_cast<size_t>(other.resource)] &&
         one.bytes_per_s == other.bytes_per_s && one.latency_s == other.latency_s && one.link_class == other.link_class &&
         one.inter_node == other.inter_node;
}

RotationResources classes_of(const Schedule& schedule, const topo::Topology& topology, topo::Router& router,
                             std::span<const int32_t> placement, int32_t period) {
  RotationResources result;
  const int32_t gpus = schedule.gpus;
  if (period == 0) period = schedule.period;
  if (period < 1 || gpus % period != 0 || schedule.period < 1 || period % schedule.period != 0) {
    result.why_not = "the period " + std::to_string(period) + " does not divide the " + std::to_string(gpus) +
                     " GPUs or is not a multiple of the schedule's " + std::to_string(schedule.period);
    return result;
  }
  const int32_t copies = gpus / period;
  const size_t resource_count = topology.resource_bytes_per_s.size();
  ResourceClasses classes(resource_count);
  // Each resource a held route reaches, with the routes' positions joined into its class.
  std::vector<uint8_t> reached(resource_count, 0);
  auto edges_of = [&](int32_t src, int32_t dst) {
    const auto route = router.route(placement[static_cast<size_t>(src)], placement[static_cast<size_t>(dst)]);
    return std::vector<int32_t>(route.begin(), route.end());
  };
  // Each held pair's own route (its copy shifted by 0), named, kept for the last check below.
  std::vector<std::pair<std::string, std::vector<int32_t>>> held_routes;
  for (const auto& [src, dst] : held_pairs(schedule, period)) {
    const std::string pair = "the route from GPU " + std::to_string(src) + " to GPU " + std::to_string(dst);
    const std::vector<int32_t> held_edges = edges_of(src, dst);
    std::vector<int32_t>& held = held_routes.emplace_back(pair, std::vector<int32_t>{}).second;
    for (int32_t edge : held_edges) held.push_back(topology.link(edge).resource);
    std::vector<std::vector<int32_t>> at_position(held.size());
    for (int32_t copy = 0; copy < copies; ++copy) {
      const int32_t shift = copy * period;
      const std::vector<int32_t> shifted = copy == 0 ? held_edges : edges_of((src + shift) % gpus, (dst + shift) % gpus);
      if (shifted.size() != held.size()) {
        result.why_not = pair + " has " + std::to_string(held.size()) + " hops and its copy shifted by " +
                         std::to_string(shift) + " GPUs " + std::to_string(shifted.size());
        return result;
      }
      for (size_t position = 0; position < held.size(); ++position) {
        // Equal latencies and kinds too: the flow model and the routed cost read them.
        if (!same_link(topology, held_edges[position], shifted[position])) {
          result.why_not = pair + " and its copy shifted by " + std::to_string(shift) +
                           " GPUs cross links of different bandwidths, latencies or kinds";
          return result;
        }
        const auto resource = topology.link(shifted[position]).resource;
        reached[static_cast<size_t>(resource)] = 1;
        at_position[position].push_back(resource);
        classes.join(held[position], resource);
      }
    }
    for (auto& resources : at_position) {
      std::sort(resources.begin(), resources.end());
      if (std::adjacent_find(resources.begin(), resources.end()) != resources.end()) {
        result.why_not = pair + " and one of its shifted copies cross the same link: the copies share it, which one flow cannot stand for";
        return result;
      }
    }
  }
  // Every class reached holds exactly one resource per shifted copy, and no route crosses a class twice.
  std::vector<int32_t> members(resource_count, 0);
  result.representative.resize(resource_count);
  for (size_t resource = 0; resource < resource_count; ++resource) {
    result.representative[resource] = classes.find(static_cast<int32_t>(resource));
    if (reached[resource]) ++members[static_cast<size_t>(result.representative[resource])];
  }
  for (size_t resource = 0; resource < resource_count; ++resource)
    if (reached[resource] && members[static_cast<size_t>(result.representative[resource])] != copies) {
      result.why_not = "the links the held transfers' shifted copies cross do not fall into classes of one link per copy";
      result.representative.clear();
      return result;
    }
  for (const auto& [pair, route] : held_routes) {
    std::vector<int32_t> crossed;
    for (int32_t resource : route) crossed.push_back(result.representative[static_cast<size_t>(resource)]);
    std::sort(crossed.begin(), crossed.end());
    if (std::adjacent_find(crossed.begin(), crossed.end()) != crossed.end()) {
      result.why_not = pair + " crosses two shifted copies of one link";
      result.representative.clear();
      return result;
    }
  }
  return result;
}

}  // namespace

RotationResources rotation_resources(const Schedule& schedule, const topo::Topology& topology,
                                     std::span<const int32_t> placement, int32_t period) {
  topo::Router router(topology);
  return classes_of(schedule, topology, router, placement, period);
}

int32_t symmetric_period(const Schedule& held, const topo::Topology& topology, std::span<const int32_t> placement) {
  if (held.form != ProgramForm::rotation || held.period < 1) return 0;
  // One router for every period tried: its tables take longer to build than the routes asked.
  topo::Router router(topology);
  for (int32_t period = held.period; period < held.gpus; period += held.period)
    if (held.gpus % period == 0 && classes_of(held, topology, router, placement, period).why_not.empty()) return period;
  return 0;
}

}  // namespace tessera::sim
