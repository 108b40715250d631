// The engine on its own: a task DAG built by hand, against times derived by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "arrivals.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/topologies/builders.hpp"

using namespace tessera;
using test_support::Arrivals;

TEST_CASE("a task starts when the last task it waits for arrives", "[sim][engine]") {
  // Three ranks on a switch of 1 GB/s links, no latency. a: 0 -> 1 and b: 2 -> 1 share the link
  // into rank 1 at 0.5 GB/s each, so 1 GB each arrives at 2 s. c: 1 -> 0 waits for both, then
  // moves 1 GB alone at 1 GB/s: it arrives at 3 s, with the transfer. Alpha-beta ignores the
  // sharing: a and b arrive at 1 s, c at 2 s.
  const topo::Topology star = topo::build_switch(3, 1e9, 0);
  for (const auto& [fidelity, expected_s] : {std::pair{sim::Fidelity::flow, 3.0}, std::pair{sim::Fidelity::alpha_beta, 2.0}}) {
    sim::EngineOptions options;
    options.fidelity = fidelity;
    Arrivals client;
    sim::Engine engine(star, {0, 1, 2}, options, client);
    client.engine = &engine;
    const int32_t transfer = engine.begin_transfer();
    const int32_t a = engine.add_task(transfer, 0, 1, 1e9, true);
    const int32_t b = engine.add_task(transfer, 2, 1, 1e9, true);
    const int32_t c = engine.add_task(transfer, 1, 0, 1e9, true);
    engine.add_dependency(a, c);
    engine.add_dependency(b, c);
    engine.start_transfer(transfer);
    engine.run();
    INFO(sim::to_string(fidelity));
    REQUIRE(client.arrived.size() == 1);
    CHECK(client.arrived[0].second == Approx(expected_s).epsilon(1e-12));
    CHECK(engine.received_bytes() == std::vector<double>{1e9, 2e9, 0});
    CHECK(engine.task_count() == 3);
  }
}

TEST_CASE("per-message costs: the overhead once per operation, nothing within a GPU", "[sim][engine]") {
  // Two GPUs on a ring of 1 GB/s generic links (a network path) without link latency; each
  // message pays the network latency of 2 us, and the operation's first one the 5 us overhead.
  // Transfer 1: two messages of 1 MB in series, the second without the overhead:
  // (1 ms + 2 us + 5 us) + (1 ms + 2 us) = 2.009 ms. Transfer 2: rank 0 to rank 2, which runs on
  // the same GPU as rank 0: a device copy, arriving at once.
  const topo::Topology pair = topo::build_ring(2, 1e9, 0, true);
  sim::EngineOptions options;
  options.message_costs = MessageCosts{5e-6, 1e-6, 2e-6};
  Arrivals client;
  sim::Engine engine(pair, {0, 1, 0}, options, client);
  client.engine = &engine;
  const int32_t messages = engine.begin_transfer();
  const int32_t first = engine.add_task(messages, 0, 1, 1e6, true);
  const int32_t second = engine.add_task(messages, 0, 1, 1e6, false);
  engine.add_dependency(first, second);
  engine.start_transfer(messages);
  const int32_t copy = engine.begin_transfer();
  engine.add_task(copy, 0, 2, 1e6, true);
  engine.start_transfer(copy);
  engine.run();
  REQUIRE(client.arrived.size() == 2);
  CHECK(client.arrived[0].first == copy);
  CHECK(client.arrived[0].second == 0);
  CHECK(client.arrived[1].first == messages);
  CHECK(client.arrived[1].second == Approx(2.009e-3).epsilon(1e-12));
}

TEST_CASE("a transfer without tasks arrives when it starts", "[sim][engine]") {
  const topo::Topology pair = topo::build_ring(2, 1e9, 0, true);
  Arrivals client;
  sim::Engine engine(pair, {0, 1}, sim::EngineOptions{}, client);
  client.engine = &engine;
  const int32_t empty = engine.begin_transfer();
  engine.start_transfer(empty);
  REQUIRE(client.arrived.size() == 1);
  CHECK(client.arrived[0] == std::pair{empty, 0.0});
  engine.run();
  CHECK(engine.event_count() == 0);
}

TEST_CASE("non-finite durations and sizes are refused up front, naming the input, never a stall", "[sim][engine]") {
  const topo::Topology star = topo::build_switch(2, 1e9, 0);
  const double nan = std::nan(""), inf = HUGE_VAL;
  SECTION("a per-message overhead that is NaN or infinite names --overhead-us") {
    for (double overhead_s : {nan, inf, -1.0}) {
      sim::EngineOptions options;
      options.message_costs.overhead_s = overhead_s;
      Arrivals client;
      CHECK_THROWS_WITH(sim::Engine(star, {0, 1}, options, client), Catch::Contains("--overhead-us"));
    }
  }
  SECTION("a compute time that is NaN or infinite names the GPU profile") {
    Arrivals client;
    sim::Engine engine(star, {0, 1}, sim::EngineOptions{}, client);
    CHECK_THROWS_WITH(engine.start_compute(nan, 0), Catch::Contains("GPU profile"));
    CHECK_THROWS_WITH(engine.start_compute(inf, 0), Catch::Contains("GPU profile"));
  }
  SECTION("a message whose end would pass every double names the links") {
    const topo::Topology crawl = topo::build_switch(2, 1e-300, 0);
    Arrivals client;
    sim::Engine engine(crawl, {0, 1}, sim::EngineOptions{}, client);
    client.engine = &engine;
    const int32_t transfer = engine.begin_transfer();
    CHECK_THROWS_WITH(engine.add_task(transfer, 0, 1, nan, true), Catch::Contains("size in bytes"));
    engine.add_task(transfer, 0, 1, 1e10, true);
    CHECK_THROWS_WITH(engine.start_transfer(transfer), Catch::Contains("B/s"));
  }
}

namespace {

// Starts `transfers` transfers one after another, each of two 1 MB messages in series (0 -> 1),
// the next once the last has arrived; records each transfer's number and arrival time.
struct OneAfterAnother final : sim::EngineClient {
  sim::Engine* engine = nullptr;
  int32_t transfers = 0;
  int32_t started = 0;
  bool in_flight = false;
  std::vector<std::pair<int32_t, double>> arrived;
  void before_next_event() override {
    if (in_flight || started == transfers) return;
    const int32_t transfer = engine->begin_transfer();
    const int32_t first = engine->add_task(transfer, 0, 1, 1e6, true);
    const int32_t second = engine->add_task(transfer, 0, 1, 1e6, true);
    engine->add_dependency(first, second);
    engine->start_transfer(transfer);
    ++started;
    in_flight = true;
  }
  void transfer_arrived(int32_t transfer) override {
    arrived.emplace_back(transfer, engine->now_s());
    in_flight = false;
  }
};

}  // namespace

TEST_CASE("an arrived transfer's number and its tasks' slots are used again", "[sim][engine]") {
  // 100 transfers in series, each of two 1 MB messages in series over a 1 GB/s link without
  // latency: transfer k arrives at 2k ms. Only one transfer and two tasks are ever in flight, so
  // the engine holds two task slots and reuses the first transfer's number every time, while
  // counting all 200 tasks.
  const topo::Topology pair = topo::build_ring(2, 1e9, 0, true);
  for (sim::Fidelity fidelity : {sim::Fidelity::flow, sim::Fidelity::alpha_beta}) {
    sim::EngineOptions options;
    options.fidelity = fidelity;
    OneAfterAnother client;
    client.transfers = 100;
    sim::Engine engine(pair, {0, 1}, options, client);
    client.engine = &engine;
    engine.run();
    INFO(sim::to_string(fidelity));
    REQUIRE(client.arrived.size() == 100);
    for (size_t k = 0; k < client.arrived.size(); ++k) {
      CHECK(client.arrived[k].first == client.arrived[0].first);
      CHECK(client.arrived[k].second == Approx(2e-3 * static_cast<double>(k + 1)).epsilon(1e-12));
    }
    CHECK(engine.task_count() == 200);
    CHECK(engine.task_slots() == 2);
    CHECK(engine.received_bytes() == std::vector<double>{0, 2e8});
  }
}
