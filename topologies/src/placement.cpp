// Rank placement by name: a GPU sequence (which GPU position 0, 1, ... takes), optionally after
// a stride permutation of the ranks. The sequences follow the servers and rails of a cluster;
// the stride brings a ring of stride T (a mesh's KV-ring: ranks C, C + a, C + 2a, ...) onto
// consecutive positions. "auto" is the search of placement_search.cpp over these orders.
#include "tessera/topologies/placement.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/topologies/placement_search.hpp"

namespace tessera::topo {

namespace {

std::vector<int32_t> linear(int32_t ranks) {
  std::vector<int32_t> placement(static_cast<size_t>(ranks));
  std::iota(placement.begin(), placement.end(), 0);  // rank r on GPU r
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

// Servers in order; in every other server the blocks of `block` GPUs come in reverse order
// (each block keeps its own order). Blocks of one GPU walk every other server backwards (0..7,
// 15..8, 16..23, ...): consecutive ranks on different servers sit on GPUs of the same index, so
// on a rail-optimised fabric each ring hop between servers stays on one rail (one leaf switch)
// instead of crossing a spine. Blocks of a ring's length L (a mesh's Q-ring: L consecutive
// ranks) do the same for a ring of stride L (its KV-ring): it passes through every block of a
// server and leaves on the local index where the next server, walked the other way, takes it in.
std::vector<int32_t> rail_aligned_blocks(const Topology& topology, int32_t ranks, int32_t block) {
  std::vector<int32_t> placement;
  const std::vector<std::vector<int32_t>> servers = servers_of(topology);
  for (size_t server = 0; server < servers.size() && static_cast<int32_t>(placement.size()) < ranks; ++server) {
    const std::vector<int32_t>& gpus = servers[server];
    if (gpus.size() % static_cast<size_t>(block) != 0)
      throw UserError("rail-aligned:" + std::to_string(block) + ": server " + std::to_string(server) + " has " +
                      std::to_string(gpus.size()) + " GPUs, not a multiple of " + std::to_string(block));
    const size_t blocks = gpus.size() / static_cast<size_t>(block);
    for (size_t b = 0; b < blocks; ++b) {
      const size_t taken = server % 2 == 1 ? blocks - 1 - b : b;
      for (size_t i = 0; i < static_cast<size_t>(block); ++i)
        if (static_cast<int32_t>(placement.size()) < ranks)
          placement.push_back(gpus[taken * static_cast<size_t>(block) + i]);
    }
  }
  return placement;
}

// Blocks of `block` consecutive positions, each inside one server: a block that does not fit in
// what is left of a server starts the next one, leaving GPUs idle (rings of 3 on servers of 8:
// two rings per server, two GPUs idle).
std::vector<int32_t> packed(const Topology& topology, int32_t ranks, int32_t block) {
  const std::vector<std::vector<int32_t>> servers = servers_of(topology);
  std::vector<int32_t> placement;
  size_t server = 0, used = 0;
  while (static_cast<int32_t>(placement.size()) < ranks) {
    const size_t size = static_cast<size_t>(std::min<int32_t>(block, ranks - static_cast<int32_t>(placement.size())));
    if (server < servers.size() && used + size > servers[server].size()) {
      ++server;
      used = 0;
    }
    if (server == servers.size() || size > servers[server].size())
      throw UserError("packed:" + std::to_string(block) + ": " + std::to_string(ranks) +
                      " ranks in whole blocks do not fit the servers of '" + topology.name + "'");
    for (size_t i = 0; i < size; ++i) placement.push_back(servers[server][used++]);
  }
  return placement;
}

// "T" of "stride:T" or "S" of "rail-aligned:S": a whole number from 1 to `limit`.
int32_t order_parameter(const std::string& order, const std::string& text, int32_t limit) {
  const bool digits = !text.empty() && text.size() <= 7 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t value = digits ? std::stoll(text) : 0;
  if (value < 1 || value > limit)
    throw UserError("placement '" + order + "': expected a whole number from 1 to " + std::to_string(limit) +
                    " after ':', got '" + text + "'");
  return static_cast<int32_t>(value);
}

// The GPUs positions 0, 1, ... take, for a GPU sequence's name.
std::vector<int32_t> gpu_sequence(const Topology& topology, int32_t ranks, const std::string& order,
                                  const std::string& sequence) {
  auto parameter = [&](const std::string& prefix) -> std::optional<int32_t> {
    if (sequence.rfind(prefix + ":", 0) != 0) return std::nullopt;
    return order_parameter(order, sequence.substr(prefix.size() + 1), topology.gpu_count());
  };
  if (sequence == "linear") return linear(ranks);
  if (sequence == "round-robin") return round_robin(topology, ranks);
  if (sequence == "rail-aligned") return rail_aligned_blocks(topology, ranks, 1);
  if (auto block = parameter("rail-aligned")) return rail_aligned_blocks(topology, ranks, *block);
  if (auto block = parameter("packed")) return packed(topology, ranks, *block);
  if (sequence.rfind("list:", 0) == 0) return explicit_list(topology, ranks, sequence.substr(5));
  throw UserError("unknown placement '" + order +
                  "' (expected linear, round-robin, rail-aligned, rail-aligned:S, packed:K, stride:T+ORDER, "
                  "list:G0,G1,... or auto)");
}

}  // namespace

std::vector<int32_t> order_ranks(const Topology& topology, int32_t ranks, const std::string& order) {
  if (ranks > topology.gpu_count())
    throw UserError("the schedule has " + std::to_string(ranks) + " ranks but the topology has " +
                    std::to_string(topology.gpu_count()) + " GPUs");
  // "stride:T+SEQUENCE": position i holds the i-th rank in the order (r mod T, r div T).
  std::vector<int32_t> rank_at(static_cast<size_t>(ranks));
  std::string sequence = order;
  int32_t stride = 1;
  if (order.rfind("stride:", 0) == 0) {
    const size_t plus = order.find('+');
    if (plus == std::string::npos)
      throw UserError("placement '" + order + "': expected stride:T+ORDER (e.g. stride:8+linear)");
    stride = order_parameter(order, order.substr(7, plus - 7), std::max(ranks, 1));
    sequence = order.substr(plus + 1);
  }
  std::iota(rank_at.begin(), rank_at.end(), 0);
  std::stable_sort(rank_at.begin(), rank_at.end(),
                   [stride](int32_t x, int32_t y) { return x % stride < y % stride; });
  const std::vector<int32_t> gpus = gpu_sequence(topology, ranks, order, sequence);
  std::vector<int32_t> placement(static_cast<size_t>(ranks));
  for (size_t position = 0; position < rank_at.size(); ++position)
    placement[static_cast<size_t>(rank_at[position])] = gpus[position];
  return placement;
}

std::vector<int32_t> place_ranks(const Topology& topology, const schedules::CheckedSchedule& checked,
                                 const std::string& placement) {
  return choose_placement(topology, checked, placement).gpu_of_rank;
}

}  // namespace tessera::topo
