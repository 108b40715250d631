#include "tessera/schedules/mesh_plan.hpp"

#include "tessera/core/error.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <limits>
#include <tuple>

namespace tessera::schedules {

MeshOrder parse_mesh_order(const std::string& text) {
  if (text.empty() || text == "greedy") return MeshOrder::greedy;
  if (text == "receives-first") return MeshOrder::receives_first;
  if (text == "ring-order") return MeshOrder::ring_order;
  throw UserError("mesh variant '" + text + "' is not one of greedy, receives-first, ring-order, optimal");
}

std::string to_string(MeshOrder order) {
  switch (order) {
    case MeshOrder::greedy: return "greedy";
    case MeshOrder::receives_first: return "receives-first";
    case MeshOrder::ring_order: return "ring-order";
    case MeshOrder::explicit_order: return "explicit";
  }
  return "?";
}

std::vector<MeshPhase> plan_mesh_tile(int32_t a, int32_t b, const MeshCosts& costs, bool backward, MeshOrder order,
                                      const std::string& hops) {
  if (order == MeshOrder::explicit_order &&
      (static_cast<int64_t>(std::count(hops.begin(), hops.end(), 'q')) != a - 1 ||
       static_cast<int64_t>(std::count(hops.begin(), hops.end(), 'k')) != b - 1 ||
       hops.size() != static_cast<size_t>(a + b - 2)))
    throw std::invalid_argument("mesh hop order '" + hops + "' is not " + std::to_string(a - 1) + " 'q' and " +
                                std::to_string(b - 1) + " 'k'");
  std::vector<uint8_t> done(static_cast<size_t>(a) * b, 0);
  std::vector<int32_t> row_left(static_cast<size_t>(a), b), column_left(static_cast<size_t>(b), a);
  int32_t rows_present = 1, columns_present = 1;  // the GPU's own Q and KV chunks
  bool prefer_rows = true;                        // backward alternates
  std::vector<MeshPhase> phases;

  // The best ready block by principle 3, or {-1, -1} when none is ready.
  auto pick = [&]() {
    using Key = std::tuple<int, int32_t, int32_t, int32_t, int32_t>;
    Key best{std::numeric_limits<int>::max(), 0, 0, 0, 0};
    std::pair<int32_t, int32_t> choice{-1, -1};
    for (int32_t row = 0; row < rows_present; ++row) {
      if (row_left[static_cast<size_t>(row)] == 0) continue;
      for (int32_t column = 0; column < columns_present; ++column) {
        if (done[static_cast<size_t>(row) * b + column]) continue;
        Key key;
        if (order == MeshOrder::ring_order) {
          key = {0, row, column, 0, 0};  // row by row, nothing held back
        } else if (!backward || prefer_rows) {
          int local = (row == 0 ? 1 : 0) + (backward && column == 0 ? 1 : 0);
          key = {local, row_left[static_cast<size_t>(row)], column_left[static_cast<size_t>(column)], row, column};
        } else {
          int local = (column == 0 ? 1 : 0) + (row == 0 ? 1 : 0);
          key = {local, column_left[static_cast<size_t>(column)], row_left[static_cast<size_t>(row)], column, row};
        }
        if (key < best) {
          best = key;
          choice = {row, column};
        }
      }
    }
    return choice;
  };
  auto run = [&](MeshPhase& phase, std::pair<int32_t, int32_t> block) {
    auto [row, column] = block;
    done[static_cast<size_t>(row) * b + column] = 1;
    MeshPhase::Item item{row, column, false, false};
    if (--row_left[static_cast<size_t>(row)] == 0) {
      item.completes_row = row != 0;
      if (backward) prefer_rows = false;
    }
    if (--column_left[static_cast<size_t>(column)] == 0) {
      item.completes_column = backward && column != 0;
      if (backward) prefer_rows = true;
    }
    phase.blocks.push_back(item);
  };

  while (rows_present < a || columns_present < b) {
    bool take_q;
    if (order == MeshOrder::greedy) {
      // Principle 1: blocks unlocked per second of transfer.
      double gain_q = rows_present < a ? columns_present / costs.q_step_s : -1;
      double gain_kv = columns_present < b ? rows_present / costs.kv_step_s : -1;
      take_q = gain_q > gain_kv || (gain_q == gain_kv && static_cast<double>(rows_present) / a <=
                                                             static_cast<double>(columns_present) / b);
    } else if (order == MeshOrder::explicit_order) {
      take_q = hops[phases.size()] == 'q';
    } else if (order == MeshOrder::receives_first) {
      take_q = rows_present < a && (columns_present >= b || rows_present <= columns_present);
    } else {
      take_q = rows_present < a;
    }
    MeshPhase phase;
    phase.step = take_q ? MeshPhase::Step::q : MeshPhase::Step::kv;
    // Principle 2: just enough compute to hide this hop (ring order: everything unlocked;
    // receives first: nothing until every hop is issued).
    double budget = take_q ? costs.q_step_s : costs.kv_step_s;
    if (order == MeshOrder::ring_order) budget = std::numeric_limits<double>::infinity();
    if (order == MeshOrder::receives_first) budget = 0;
    while (budget > 0) {
      auto block = pick();
      if (block.first < 0) break;
      run(phase, block);
      budget -= costs.block_s;
    }
    phases.push_back(std::move(phase));
    if (take_q) {
      ++rows_present;
    } else {
      ++columns_present;
    }
  }
  MeshPhase tail;
  for (auto block = pick(); block.first >= 0; block = pick()) run(tail, block);
  phases.push_back(std::move(tail));
  return phases;
}

std::string mesh_hop_order(const std::vector<MeshPhase>& phases) {
  std::string hops;
  for (const auto& phase : phases)
    if (phase.step != MeshPhase::Step::none) hops += phase.step == MeshPhase::Step::q ? 'q' : 'k';
  return hops;
}

std::vector<std::string> mesh_hop_orders(int32_t a, int32_t b) {
  // The interleavings in lexicographic order: start from every 'k' first, step to the next
  // permutation ('k' < 'q').
  std::string hops = std::string(static_cast<size_t>(std::max(0, b - 1)), 'k') + std::string(static_cast<size_t>(std::max(0, a - 1)), 'q');
  std::vector<std::string> orders;
  do {
    orders.push_back(hops);
  } while (std::next_permutation(hops.begin(), hops.end()));
  return orders;
}

int64_t mesh_hop_order_count(int32_t a, int32_t b) {
  const int64_t n = a + b - 2, k = std::min(a, b) - 1;
  int64_t count = 1;
  for (int64_t i = 1; i <= k; ++i) count = count * (n - k + i) / i;  // exact at every step
  return count;
}

bool mesh_order_searchable(TileShape tile) {
  const int32_t a = tile.first, b = tile.second;
  return (a >= 1 && b >= 1 && a <= 4 && b <= 4) || (a == 2 && b == 8) || (a == 8 && b == 2);
}

}  // namespace tessera::schedules
