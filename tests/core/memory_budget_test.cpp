// MemoryBudget: work admitted by the bytes it holds (core/memory_budget.hpp).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "tessera/core/memory_budget.hpp"
#include "tessera/core/parallel.hpp"

using namespace tessera;
using namespace std::chrono_literals;

TEST_CASE("a memory budget admits what fits beside the running, and one item alone always", "[memory_budget]") {
  MemoryBudget budget(10);
  budget.acquire(4);
  budget.acquire(6);  // 4 + 6 = 10: fits exactly
  CHECK(budget.held_bytes() == 10);
  CHECK(budget.running() == 2);
  // One more byte does not fit: it waits until something is given back.
  auto waiting = std::async(std::launch::async, [&] { budget.acquire(1); });
  CHECK(waiting.wait_for(100ms) == std::future_status::timeout);
  budget.release(4);
  REQUIRE(waiting.wait_for(10s) == std::future_status::ready);
  CHECK(budget.held_bytes() == 7);
  CHECK(budget.running() == 2);
  budget.release(6);
  budget.release(1);
  CHECK(budget.running() == 0);
  CHECK(budget.held_bytes() == 0);
  // Larger than the whole budget: admitted when nothing else runs (the caller checked that it
  // fits the machine alone), and nothing else is admitted beside it.
  budget.acquire(25);
  CHECK(budget.running() == 1);
  auto beside = std::async(std::launch::async, [&] { budget.acquire(1); });
  CHECK(beside.wait_for(100ms) == std::future_status::timeout);
  budget.release(25);
  REQUIRE(beside.wait_for(10s) == std::future_status::ready);
  budget.release(1);
}

TEST_CASE("threads under a memory budget never hold more than it, however many run", "[memory_budget]") {
  // 40 items of 3, 5 or 7 bytes on 8 threads under a budget of 12: at most 12 bytes held at any
  // moment, and every item runs once.
  MemoryBudget budget(12);
  std::atomic<int> done{0};
  std::atomic<bool> over{false};
  std::atomic<int> most_running{0};
  parallel_for(40, 8, [&](size_t index) {
    const double bytes = 3.0 + 2.0 * static_cast<double>(index % 3);
    const MemoryReservation reserved(budget, bytes);
    if (budget.held_bytes() > 12) over = true;
    const int now = static_cast<int>(budget.running());
    int seen = most_running.load();
    while (now > seen && !most_running.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(1ms);
    ++done;
  });
  CHECK(done == 40);
  CHECK_FALSE(over);
  CHECK(most_running.load() <= 4);  // four items of 3 bytes at the most
  CHECK(budget.running() == 0);
}
