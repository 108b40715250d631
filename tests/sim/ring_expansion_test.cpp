// Ring collectives made step by step (collective_expansion.hpp's TaskSource): the closed-form
// times of uniform rings, the same run as the whole ring DAG listed up front (built here by hand
// from the header's description), and a peak of O(members) task slots rather than O(tasks).
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "arrivals.hpp"
#include "tessera/sim/collective_expansion.hpp"
#include "tessera/sim/collective_sim.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/topologies/builders.hpp"

using namespace tessera;
using test_support::Arrivals;

namespace {

// The member whose piece position `p` passes on at `step`, worked out from the algorithm rather
// than taken from ring_piece_owner: all-gather forwards the piece that started `step` members
// back; reduce-scatter passes on the sum owned `step + 1` members back (it reaches its owner
// after k - 1 steps); all-reduce is a reduce-scatter, then an all-gather of the owned sums.
int32_t owner_of(CollectiveKind kind, int32_t k, int32_t step, int32_t p) {
  auto back = [k](int32_t position, int32_t by) { return ((position - by) % k + k) % k; };
  if (kind == CollectiveKind::all_gather) return back(p, step);
  if (kind == CollectiveKind::reduce_scatter) return back(p, step + 1);
  return step < k - 1 ? back(p, step + 1) : back(p, step - (k - 1));
}

// The whole ring listed before it starts, as the engine ran it before rings were made step by
// step: tasks step-major, then each task's waiters, its member's next step before its
// successor's.
int32_t add_whole_ring(sim::Engine& engine, CollectiveKind kind, const std::vector<int32_t>& members,
                       const std::vector<double>& piece_bytes) {
  const auto k = static_cast<int32_t>(members.size());
  const int32_t steps = kind == CollectiveKind::all_reduce ? 2 * (k - 1) : k - 1;
  const int32_t transfer = engine.begin_transfer();
  std::vector<int32_t> task(static_cast<size_t>(steps * k));
  for (int32_t step = 0; step < steps; ++step)
    for (int32_t p = 0; p < k; ++p)
      task[static_cast<size_t>(step * k + p)] =
          engine.add_task(transfer, members[static_cast<size_t>(p)], members[static_cast<size_t>((p + 1) % k)],
                          piece_bytes[static_cast<size_t>(owner_of(kind, k, step, p))], step == 0);
  for (int32_t step = 0; step + 1 < steps; ++step)
    for (int32_t p = 0; p < k; ++p) {
      engine.add_dependency(task[static_cast<size_t>(step * k + p)], task[static_cast<size_t>((step + 1) * k + p)]);
      engine.add_dependency(task[static_cast<size_t>(step * k + p)],
                            task[static_cast<size_t>((step + 1) * k + (p + 1) % k)]);
    }
  return transfer;
}

struct RunFigures {
  std::vector<std::pair<int32_t, double>> arrived;
  std::vector<double> received, carried, busy;
  size_t events = 0, tasks = 0;
};

// Two rings over overlapping members, and a chain of plain messages, on one engine; `whole`
// lists the rings up front, otherwise they are made step by step.
RunFigures run_mix(bool whole, sim::Fidelity fidelity, int32_t channels) {
  const topo::Topology torus = topo::build_torus({4, 4}, 25e9, 1e-6);
  std::vector<int32_t> placement(16);
  for (int32_t rank = 0; rank < 16; ++rank) placement[static_cast<size_t>(rank)] = rank;
  sim::EngineOptions options;
  options.fidelity = fidelity;
  options.channels = channels;
  options.message_costs = MessageCosts{5e-6, 1e-6, 3e-6};
  Arrivals client;
  sim::Engine engine(torus, placement, options, client);
  client.engine = &engine;
  // Scrambled ring orders, so that paths cross the torus and share links; uneven pieces.
  const std::vector<int32_t> first = {0, 5, 10, 15, 3, 6, 9, 12, 1, 14, 7, 8};
  const std::vector<int32_t> second = {2, 13, 4, 11, 0, 9};
  std::vector<double> first_bytes, second_bytes;
  for (size_t i = 0; i < first.size(); ++i) first_bytes.push_back(1e6 * static_cast<double>(1 + i % 5));
  for (size_t i = 0; i < second.size(); ++i) second_bytes.push_back(3e6 / static_cast<double>(1 + i));
  for (const auto& [kind, members, bytes] :
       {std::tuple{CollectiveKind::all_reduce, &first, &first_bytes},
        std::tuple{CollectiveKind::all_gather, &second, &second_bytes}}) {
    const int32_t transfer = whole ? add_whole_ring(engine, kind, *members, *bytes)
                                   : sim::begin_ring_transfer(engine, kind, *members, *bytes);
    engine.start_transfer(transfer);
  }
  const int32_t chain = engine.begin_transfer();
  int32_t previous = -1;
  for (int32_t hop = 0; hop < 4; ++hop) {
    const int32_t task = engine.add_task(chain, hop, 15 - hop, 2e6, hop == 0);
    if (previous >= 0) engine.add_dependency(previous, task);
    previous = task;
  }
  engine.start_transfer(chain);
  const int32_t reduce = sim::begin_ring_transfer(engine, CollectiveKind::reduce_scatter, second, second_bytes);
  engine.start_transfer(reduce);
  engine.run();
  return RunFigures{client.arrived,      engine.received_bytes(), engine.carried_bytes(),
                    engine.busy_s(),     engine.event_count(),    engine.task_count()};
}
}  // namespace

TEST_CASE("a ring releases each step in the order the whole ring DAG did", "[sim][collective][ring]") {
  // The whole DAG: step s + 1 of each position waits for two tasks; (s, p) lists its waiters
  // as (s + 1, p) then (s + 1, p + 1), and on arrival releases, in that order, those whose count
  // reaches zero. Tasks arrive in random orders (any task running may arrive next), and
  // RingProgress must release the same tasks in the same order at every arrival.
  std::mt19937 random(18);
  for (int32_t k : {2, 3, 4, 7})
    for (int32_t steps : {1, k - 1, 2 * (k - 1)})
      for (int round = 0; round < 20; ++round) {
        INFO("k = " << k << ", steps = " << steps << ", round " << round);
        std::vector<int32_t> waiting(static_cast<size_t>(steps * k), 2);
        sim::RingProgress progress(k, steps);
        std::vector<std::pair<int32_t, int32_t>> running;  // (step, position)
        for (int32_t p = 0; p < k; ++p) running.emplace_back(0, p);
        int32_t arrivals = 0;
        while (!running.empty()) {
          const size_t pick = std::uniform_int_distribution<size_t>(0, running.size() - 1)(random);
          const auto [step, p] = running[pick];
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
          ++arrivals;
          std::vector<int32_t> expected;
          if (step + 1 < steps)
            for (int32_t next : {p, (p + 1) % k})
              if (--waiting[static_cast<size_t>((step + 1) * k + next)] == 0) expected.push_back(next);
          const sim::RingProgress::Released released = progress.arrived(step, p);
          const std::vector<int32_t> got(released.positions, released.positions + released.count);
          REQUIRE(got == expected);
          for (int32_t next : got) running.emplace_back(step + 1, next);
        }
        CHECK(arrivals == steps * k);
      }
}

TEST_CASE("each ring step passes on the piece the algorithm says", "[sim][collective][ring]") {
  for (int32_t k : {2, 3, 4, 7})
    for (const auto& [kind, steps] : {std::pair{CollectiveKind::all_gather, k - 1},
                                      std::pair{CollectiveKind::reduce_scatter, k - 1},
                                      std::pair{CollectiveKind::all_reduce, 2 * (k - 1)}})
      for (int32_t step = 0; step < steps; ++step)
        for (int32_t p = 0; p < k; ++p) {
          INFO(to_string(kind) << ", k = " << k << ", step " << step << ", position " << p);
          CHECK(sim::ring_piece_owner(kind, k, step, p) == owner_of(kind, k, step, p));
        }
}

TEST_CASE("a ring made step by step takes (k - 1)(alpha + S/(k B)) per pass", "[sim][collective][ring]") {
  // A unidirectional ring of k GPUs, links of B with latency alpha: every step moves S/k over
  // its own link while the other members do the same on theirs, then pays alpha. All-gather and
  // reduce-scatter take k - 1 steps, all-reduce 2(k - 1).
  const double bandwidth = 10e9, alpha = 2e-6, bytes = 3e8;
  for (int32_t k : {2, 3, 5, 8}) {
    const topo::Topology ring = topo::build_ring(k, bandwidth, alpha, false);
    std::vector<int32_t> placement(static_cast<size_t>(k));
    for (int32_t rank = 0; rank < k; ++rank) placement[static_cast<size_t>(rank)] = rank;
    for (const auto& [kind, steps] : {std::pair{CollectiveKind::all_gather, k - 1},
                                      std::pair{CollectiveKind::reduce_scatter, k - 1},
                                      std::pair{CollectiveKind::all_reduce, 2 * (k - 1)}})
      for (sim::Fidelity fidelity : {sim::Fidelity::flow, sim::Fidelity::alpha_beta}) {
        const auto result = sim::simulate_collective(kind, bytes, ring, placement, fidelity);
        const double expected_s = steps * (alpha + bytes / k / bandwidth);
        INFO(to_string(kind) << " on " << k << " ranks, " << sim::to_string(fidelity));
        CHECK(result.makespan_s == Approx(expected_s).epsilon(1e-12));
        CHECK(result.flows == static_cast<size_t>(steps * k));
      }
  }
}

TEST_CASE("a ring made step by step runs exactly as the whole ring listed up front", "[sim][collective][ring]") {
  // Shared links, uneven pieces, per-message costs, two rings and a chain of messages at once:
  // any change in which task starts when, or in the order tasks start at one instant, moves
  // some figure (channel queues are FIFO; max-min shares depend on the order flows start).
  for (sim::Fidelity fidelity : {sim::Fidelity::flow, sim::Fidelity::alpha_beta})
    for (int32_t channels : {0, 1}) {
      INFO(sim::to_string(fidelity) << ", channels " << channels);
      const RunFigures whole = run_mix(true, fidelity, channels);
      const RunFigures made = run_mix(false, fidelity, channels);
      REQUIRE(whole.arrived.size() == 4);
      CHECK(made.arrived == whole.arrived);  // transfer by transfer, to the bit
      CHECK(made.received == whole.received);
      CHECK(made.carried == whole.carried);
      CHECK(made.busy == whole.busy);
      CHECK(made.events == whole.events);
      // 22 x 12 all-reduce, 5 x 6 all-gather, 4 chained messages, 5 x 6 reduce-scatter.
      CHECK(made.tasks == static_cast<size_t>(22 * 12 + 5 * 6 + 4 + 5 * 6));
      CHECK(whole.tasks == made.tasks);
    }
}

TEST_CASE("a ring made step by step holds one task per member, not one per step", "[sim][collective][ring]") {
  // An all-reduce over 64 members has 2 x 63 x 64 = 8064 tasks; each member runs one step at a
  // time, and an arriving task's slot is reused after it starts its successors: at most k + 1.
  const int32_t k = 64;
  const topo::Topology ring = topo::build_ring(k, 10e9, 1e-6, false);
  std::vector<int32_t> members(static_cast<size_t>(k));
  for (int32_t rank = 0; rank < k; ++rank) members[static_cast<size_t>(rank)] = rank;
  const std::vector<double> pieces(static_cast<size_t>(k), 1e6);
  Arrivals client;
  sim::Engine engine(ring, members, sim::EngineOptions{}, client);
  client.engine = &engine;
  engine.start_transfer(sim::begin_ring_transfer(engine, CollectiveKind::all_reduce, members, pieces));
  engine.run();
  REQUIRE(client.arrived.size() == 1);
  CHECK(engine.task_count() == static_cast<size_t>(2 * (k - 1) * k));
  CHECK(engine.task_slots() <= static_cast<size_t>(k + 1));
  CHECK(engine.received_bytes() == std::vector<double>(static_cast<size_t>(k), 2.0 * (k - 1) * 1e6));
}

TEST_CASE("a ring of fewer than two members arrives when it starts", "[sim][collective][ring]") {
  const topo::Topology ring = topo::build_ring(2, 10e9, 1e-6, false);
  Arrivals client;
  sim::Engine engine(ring, {0, 1}, sim::EngineOptions{}, client);
  client.engine = &engine;
  const int32_t lone[] = {1};
  const double piece[] = {1e6};
  const int32_t transfer = sim::begin_ring_transfer(engine, CollectiveKind::all_gather, lone, piece);
  engine.start_transfer(transfer);
  REQUIRE(client.arrived.size() == 1);
  CHECK(client.arrived[0] == std::pair<int32_t, double>{transfer, 0.0});
  CHECK(engine.task_count() == 0);
}
