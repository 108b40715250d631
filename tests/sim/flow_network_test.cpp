// The flow network shares out only the components (flows linked by shared resources) that a
// change touches, and queues events and completions by instant. These tests check that this
// is exact: a hand-worked case of two disjoint groups changing one at a time, random networks
// against a from-scratch sharing (bit for bit) and an independent water-filling (to 1e-9), and
// the instant queues against a plain heap over (time, order) with many ties.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "tessera/sim/flow_network.hpp"
#include "tessera/sim/min_queue.hpp"

using namespace tessera;

namespace {

// Max-min rates by water-filling, written apart from FlowNetwork: raise every unfrozen flow's
// rate together until a resource fills; its flows freeze there.
std::vector<double> water_filling(const std::vector<double>& capacity, const std::vector<std::vector<int32_t>>& paths) {
  std::vector<double> rate(paths.size(), 0.0);
  std::vector<bool> frozen(paths.size(), false);
  while (true) {
    double best = std::numeric_limits<double>::infinity();
    int32_t best_resource = -1;
    for (size_t r = 0; r < capacity.size(); ++r) {
      double used = 0;
      int32_t unfrozen = 0;
      for (size_t f = 0; f < paths.size(); ++f)
        for (int32_t on : paths[f])
          if (on == static_cast<int32_t>(r)) frozen[f] ? used += rate[f] : ++unfrozen;
      if (unfrozen == 0) continue;
      const double share = std::max(0.0, capacity[r] - used) / unfrozen;
      if (share < best) best = share, best_resource = static_cast<int32_t>(r);
    }
    if (best_resource < 0) return rate;
    for (size_t f = 0; f < paths.size(); ++f)
      if (!frozen[f] && std::count(paths[f].begin(), paths[f].end(), best_resource) > 0) rate[f] = best, frozen[f] = true;
  }
}

}  // namespace

TEST_CASE("max-min sharing: two disjoint groups change independently", "[sim][maxmin]") {
  // Group A on L0 = 1 GB/s and L1 = 2 GB/s: a1 on L0, a2 on L0 and L1, a3 on L1 (1 GB each).
  // L0 fills first at 0.5 GB/s for a1 and a2; a3 takes L1's other 1.5 GB/s.
  // Group B on L2 = 3 GB/s and L3 = 1 GB/s: b1 on L2 (3 GB), b2 on L2 and L3 (1 GB). L3 fills
  // first at 1 GB/s for b2; b1 takes L2's other 2 GB/s.
  sim::FlowNetwork network({1e9, 2e9, 3e9, 1e9});
  const int32_t l0[] = {0}, l01[] = {0, 1}, l1[] = {1}, l2[] = {2}, l23[] = {2, 3}, l3[] = {3};
  const int32_t a1 = network.start(l0, 1e9, 0), a2 = network.start(l01, 1e9, 0), a3 = network.start(l1, 1e9, 0);
  const int32_t b1 = network.start(l2, 3e9, 0), b2 = network.start(l23, 1e9, 0);
  CHECK(network.rate(a1) == 0.5e9);
  CHECK(network.rate(a2) == 0.5e9);
  CHECK(network.rate(a3) == 1.5e9);
  CHECK(network.rate(b1) == 2e9);
  CHECK(network.rate(b2) == 1e9);

  // At 0.5 s b3 (0.25 GB) joins b2 on L3: L3 gives 0.5 GB/s each, b1 gets 2.5 GB/s. Group A
  // is not touched: same rates, same predicted ends.
  const int32_t b3 = network.start(l3, 0.25e9, 0.5);
  CHECK(network.rate(b1) == 2.5e9);
  CHECK(network.rate(b2) == 0.5e9);
  CHECK(network.rate(b3) == 0.5e9);
  CHECK(network.rate(a1) == 0.5e9);
  CHECK(network.rate(a2) == 0.5e9);
  CHECK(network.rate(a3) == 1.5e9);

  // Ends: a3 at 1/1.5 s. b3 at 0.5 + 0.25/0.5 = 1 s; then b2 (0.25 GB left) alone on L3 at
  // 1 GB/s ends at 1.25 s and b1 (0.75 GB left) at 2 GB/s has 0.25 GB left, which it moves
  // alone on L2 at 3 GB/s by 1.25 + 1/12 s. a1 and a2 stay at 0.5 GB/s (L0) and end at 2 s.
  const std::vector<std::pair<double, int32_t>> expected = {
      {2.0 / 3.0, a3}, {1.0, b3}, {1.25, b2}, {1.25 + 1.0 / 12.0, b1}, {2.0, std::min(a1, a2)}, {2.0, std::max(a1, a2)}};
  for (const auto& [time_s, flow] : expected) {
    const auto [next_s, next] = network.next_completion();
    INFO("expected flow " << flow << " at " << time_s << " s");
    CHECK(next == flow);
    CHECK(next_s == Approx(time_s).epsilon(1e-12));
    if (next == b3) {
      network.finish(next, next_s);
      CHECK(network.rate(b2) == 1e9);
      CHECK(network.rate(b1) == 2e9);
      CHECK(network.rate(a2) == 0.5e9);
      continue;
    }
    network.finish(next, next_s);
  }
  CHECK(network.next_completion().second == -1);
  CHECK(network.carried_bytes()[0] == Approx(2e9));
  CHECK(network.carried_bytes()[1] == Approx(2e9));
  CHECK(network.carried_bytes()[2] == Approx(4e9));
  CHECK(network.carried_bytes()[3] == Approx(1.25e9));
}

TEST_CASE("max-min sharing of changed components equals sharing everything again, bit for bit", "[sim][maxmin]") {
  std::mt19937 random(18);
  for (int round = 0; round < 40; ++round) {
    const int32_t resources = 2 + static_cast<int32_t>(random() % 12);
    std::vector<double> capacity;
    for (int32_t r = 0; r < resources; ++r) capacity.push_back(1e9 * (1 + random() % 7) / (1 + random() % 3));
    sim::FlowNetwork network(capacity);
    std::vector<std::vector<int32_t>> path_of;  // by flow id
    std::vector<int32_t> active;
    double now_s = 0;
    auto start_some = [&](int count) {
      for (int i = 0; i < count; ++i) {
        std::vector<int32_t> path;
        const int hops = 1 + static_cast<int>(random() % 3);
        for (int h = 0; h < hops; ++h) {
          const auto r = static_cast<int32_t>(random() % static_cast<uint32_t>(resources));
          if (std::find(path.begin(), path.end(), r) == path.end()) path.push_back(r);
        }
        const double bytes = 1e6 * (1 + random() % 1000);
        const int32_t id = network.start(path, bytes, now_s);
        if (path_of.size() <= static_cast<size_t>(id)) path_of.resize(static_cast<size_t>(id) + 1);
        path_of[static_cast<size_t>(id)] = path;
        active.push_back(id);
      }
    };
    start_some(3 + static_cast<int>(random() % 10));
    for (int step = 0; step < 60 && !active.empty(); ++step) {
      // A completion, sometimes with new flows at the same instant.
      const auto [time_s, flow] = network.next_completion();
      REQUIRE(flow >= 0);
      REQUIRE(time_s >= now_s);
      now_s = time_s;
      network.finish(flow, now_s);
      active.erase(std::find(active.begin(), active.end(), flow));
      if (random() % 2 == 0) start_some(1 + static_cast<int>(random() % 3));
      std::vector<double> rates;
      for (int32_t id : active) rates.push_back(network.rate(id));

      sim::FlowNetwork from_scratch = network;
      from_scratch.reshare_all(now_s);
      std::vector<std::vector<int32_t>> paths;
      for (int32_t id : active) paths.push_back(path_of[static_cast<size_t>(id)]);
      const std::vector<double> reference = water_filling(capacity, paths);
      for (size_t i = 0; i < active.size(); ++i) {
        INFO("round " << round << ", step " << step << ", flow " << active[i]);
        CHECK(rates[i] == from_scratch.rate(active[i]));  // exact
        CHECK(rates[i] == Approx(reference[i]).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("the instant queues give the order of a heap over (time, order)", "[sim][queue]") {
  std::mt19937 random(7);
  // Events: by time, class 0 before class 1 at one instant, then first in first out.
  sim::InstantQueue<uint32_t, 2> events;
  sim::MinQueue<std::tuple<double, int, uint32_t>> events_reference;  // (time, class, sequence)
  // Completions: by time, then the smallest item.
  sim::SortedInstantQueue<int32_t> completions;
  sim::MinQueue<std::pair<double, int32_t>> completions_reference;
  uint32_t sequence = 0;
  double now_s = 0;
  for (int step = 0; step < 20000; ++step) {
    if (random() % 3 != 0 || events_reference.empty()) {
      // Few distinct times, so most pushes tie; some land on the current instant.
      const double time_s = now_s + static_cast<double>(random() % 4) * 0.25;
      const int item_class = static_cast<int>(random() % 2);
      events.push(time_s, item_class, sequence);
      events_reference.push({time_s, item_class, sequence});
      ++sequence;
      const auto item = static_cast<int32_t>(random() % 50);
      completions.push(time_s, item);
      completions_reference.push({time_s, item});
      continue;
    }
    const auto [time_s, item_class, expected] = events_reference.top();
    events_reference.pop();
    REQUIRE(events.top_time_s() == time_s);
    REQUIRE(events.top_class() == item_class);
    REQUIRE(events.top() == expected);
    events.pop();
    REQUIRE(completions.top_time_s() == completions_reference.top().first);
    REQUIRE(completions.top() == completions_reference.top().second);
    completions.pop();
    completions_reference.pop();
    now_s = time_s;
  }
  CHECK(events.empty() == events_reference.empty());
}
