// Rank placement. Mesh-Attention is the schedule whose placement matters most: its a x b
// grid of ranks has Q-rings along rows (ranks R*a .. R*a + a-1, contiguous) and KV-rings along
// columns (ranks C, C + a, C + 2a, ..., stride a). Which of the two stays inside a server is
// the open question of research/papers.md A.7, so "auto" places both ways, counts the bytes
// each moves between servers, and keeps the cheaper.
#include "tessera/topologies/placement.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/error.hpp"
#include "tessera/costmodel/generators.hpp"
#include "tessera/topologies/link_loads.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::topo {

namespace {

std::vector<int32_t> linear(int32_t ranks) {
  std::vector<int32_t> placement(static_cast<size_t>(ranks));
  for (int32_t rank = 0; rank < ranks; ++rank) placement[static_cast<size_t>(rank)] = rank;
  return placement;
}

// The GPUs of each server, servers in index order (a GPU outside any server is its own).
std::vector<std::vector<int32_t>> servers_of(const Topology& topology) {
  std::map<int32_t, std::vector<int32_t>> by_server;
  for (int32_t gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    const int32_t node = topology.node_of(gpu);
    by_server[node >= 0 ? node : -1 - gpu].push_back(gpu);
  }
  std::vector<std::vector<int32_t>> servers;
  for (auto& [node, gpus] : by_server) servers.push_back(std::move(gpus));
  return servers;
}

// Rank r goes to server r % servers, its (r / servers)-th GPU: consecutive ranks never share
// a server (when there is more than one).
std::vector<int32_t> round_robin(const Topology& topology, int32_t ranks) {
  const std::vector<std::vector<int32_t>> servers = servers_of(topology);
  const auto count = static_cast<int32_t>(servers.size());
  std::vector<int32_t> placement;
  std::vector<size_t> used(servers.size(), 0);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    // Servers of unequal size: skip the full ones so that every rank still gets a GPU.
    int32_t server = rank % count;
    while (used[static_cast<size_t>(server)] >= servers[static_cast<size_t>(server)].size())
      server = (server + 1) % count;
    placement.push_back(servers[static_cast<size_t>(server)][used[static_cast<size_t>(server)]++]);
  }
  return placement;
}

// Servers in order, every other server walked backwards (0..7, 15..8, 16..23, ...): consecutive
// ranks on different servers sit on GPUs of the same index, so on a rail-optimised fabric each
// ring hop between servers stays on one rail (one leaf switch) instead of crossing a spine.
std::vector<int32_t> rail_aligned(const Topology& topology, int32_t ranks) {
  std::vector<int32_t> placement;
  const std::vector<std::vector<int32_t>> servers = servers_of(topology);
  for (size_t server = 0; server < servers.size() && static_cast<int32_t>(placement.size()) < ranks; ++server) {
    std::vector<int32_t> gpus = servers[server];
    if (server % 2 == 1) std::reverse(gpus.begin(), gpus.end());
    for (int32_t gpu : gpus)
      if (static_cast<int32_t>(placement.size()) < ranks) placement.push_back(gpu);
  }
  return placement;
}

// "list:3,0,1,2": rank i runs on the i-th GPU listed.
std::vector<int32_t> explicit_list(const Topology& topology, int32_t ranks, const std::string& text) {
  std::vector<int32_t> placement;
  std::vector<int32_t> position_of(static_cast<size_t>(topology.gpu_count()), -1);
  std::stringstream stream(text);
  std::string entry;
  while (std::getline(stream, entry, ',')) {
    const auto position = static_cast<int32_t>(placement.size());
    const std::string where = "placement list, position " + std::to_string(position) + ": ";
    int64_t gpu = -1;
    const bool digits = !entry.empty() && entry.size() <= 9 &&
                        std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) gpu = std::stoll(entry);
    if (!digits) throw UserError(where + "'" + entry + "' is not a GPU index");
    if (gpu >= topology.gpu_count())
      throw UserError(where + "GPU " + entry + " is out of range [0, " + std::to_string(topology.gpu_count() - 1) +
                      "]");
    int32_t& first = position_of[static_cast<size_t>(gpu)];
    if (first >= 0)
      throw UserError(where + "GPU " + entry + " is already used at position " + std::to_string(first) +
                      " (expected each GPU at most once)");
    first = position;
    placement.push_back(static_cast<int32_t>(gpu));
  }
  if (static_cast<int32_t>(placement.size()) != ranks)
    throw UserError("placement list has " + std::to_string(placement.size()) + " entries but the schedule has " +
                    std::to_string(ranks) + " ranks (expected one GPU per rank)");
  return placement;
}

// The tile "AxB" at the start of a mesh schedule's variant ("4x4 contiguous"), if it covers
// all ranks.
std::optional<TileShape> mesh_tile(const Schedule& schedule) {
  if (schedule.algorithm != "mesh") return std::nullopt;
  const std::string first_word = schedule.variant.substr(0, schedule.variant.find(' '));
  try {
    TileShape tile = parse_tile(first_word);
    if (static_cast<int64_t>(tile.first) * tile.second != schedule.gpus) return std::nullopt;
    return tile;
  } catch (const UserError&) {
    return std::nullopt;
  }
}

// Rings of a mesh: Q-ring R is ranks {R*a + c}, KV-ring C is ranks {r*a + C}.
std::vector<std::vector<int32_t>> rings(TileShape tile, bool q_rings) {
  const int32_t a = tile.first, b = tile.second;
  std::vector<std::vector<int32_t>> result(static_cast<size_t>(q_rings ? b : a));
  for (int32_t row = 0; row < b; ++row)
    for (int32_t column = 0; column < a; ++column)
      result[static_cast<size_t>(q_rings ? row : column)].push_back(row * a + column);
  return result;
}

// Puts whole rings inside servers. Filling the GPUs in order does that when the ring length
// divides the server size (for Q-rings that is linear placement). When it does not, a ring
// that fits in a server still gets one to itself if there are spare GPUs to leave gaps
// (e.g. rings of 3 on servers of 8: two rings per server, two GPUs idle); rings longer than a
// server, or too few spare GPUs, fall back to filling in order, so each ring spans as few
// servers as it can.
std::vector<int32_t> rings_inside_servers(const Topology& topology, const std::vector<std::vector<int32_t>>& groups,
                                          int32_t ranks) {
  const std::vector<std::vector<int32_t>> servers = servers_of(topology);
  std::vector<int32_t> placement(static_cast<size_t>(ranks), -1);
  size_t server = 0, used = 0;
  bool gapped = true;
  for (const auto& group : groups) {
    if (used + group.size() > servers[server].size()) {
      ++server;
      used = 0;
    }
    if (server == servers.size() || group.size() > servers[server].size()) {
      gapped = false;
      break;
    }
    for (int32_t rank : group) placement[static_cast<size_t>(rank)] = servers[server][used++];
  }
  if (gapped) return placement;
  std::vector<int32_t> in_order;
  for (const auto& gpus : servers) in_order.insert(in_order.end(), gpus.begin(), gpus.end());
  size_t next = 0;
  for (const auto& group : groups)
    for (int32_t rank : group) placement[static_cast<size_t>(rank)] = in_order[next++];
  return placement;
}

std::vector<int32_t> topology_aware(const Topology& topology, const Schedule& schedule) {
  const std::optional<TileShape> tile = mesh_tile(schedule);
  // Not a mesh: ring-like traffic between servers stays on one rail.
  if (!tile) return rail_aligned(topology, schedule.gpus);
  const std::vector<int32_t> q_rings_inside = rings_inside_servers(topology, rings(*tile, true), schedule.gpus);
  const std::vector<int32_t> kv_rings_inside = rings_inside_servers(topology, rings(*tile, false), schedule.gpus);
  // Inter-node bytes depend on the schedule's data sizes (Q against KV under GQA, the
  // partial outputs, the pass), so they are counted, not guessed from the ring lengths.
  const BlockGrid grid(schedule.problem, schedule.layout, schedule.chunks());
  Router router(topology);
  const int64_t q_cost = compute_link_loads(router, q_rings_inside, schedule, grid).inter_node_total();
  const int64_t kv_cost = compute_link_loads(router, kv_rings_inside, schedule, grid).inter_node_total();
  return kv_cost < q_cost ? kv_rings_inside : q_rings_inside;  // ties: Q-rings (linear when it fits)
}

}  // namespace

std::vector<int32_t> place_ranks(const Topology& topology, const Schedule& schedule, const std::string& placement) {
  const int32_t ranks = schedule.gpus;
  if (ranks > topology.gpu_count())
    throw UserError("the schedule has " + std::to_string(ranks) + " ranks but the topology has " +
                    std::to_string(topology.gpu_count()) + " GPUs");
  if (placement == "linear") return linear(ranks);
  if (placement == "round-robin") return round_robin(topology, ranks);
  if (placement == "rail-aligned") return rail_aligned(topology, ranks);
  if (placement.rfind("list:", 0) == 0) return explicit_list(topology, ranks, placement.substr(5));
  if (placement == "auto") return topology_aware(topology, schedule);
  throw UserError("unknown placement '" + placement + "' (expected linear, round-robin, rail-aligned, list:G0,G1,... or auto)");
}

}  // namespace tessera::topo
