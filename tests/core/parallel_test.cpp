// The one thread pool: every item runs once whatever the thread count, and a worker's error
// comes back to the caller (it used to terminate the process from a worker thread).
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "tessera/core/parallel.hpp"

using namespace tessera;

TEST_CASE("parallel_for runs every index exactly once", "[parallel]") {
  for (int threads : {1, 2, 7}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{1000}}) {
      std::vector<std::atomic<int>> runs(count);
      parallel_for(count, threads, [&](size_t index) { ++runs[index]; });
      for (size_t index = 0; index < count; ++index) CHECK(runs[index].load() == 1);
    }
  }
}

TEST_CASE("a worker's error is rethrown in the caller and stops handing out items", "[parallel]") {
  for (int threads : {1, 3}) {
    std::atomic<size_t> started{0};
    auto work = [&](size_t index) {
      ++started;
      if (index == 10) throw std::runtime_error("item 10 failed");
    };
    CHECK_THROWS_WITH(parallel_for(10'000, threads, work), "item 10 failed");
    // Items are handed out in order: at most the threads' items in flight after item 10 start.
    CHECK(started.load() <= 11 + static_cast<size_t>(threads));
  }
}

TEST_CASE("default_threads is at least one", "[parallel]") { CHECK(default_threads() >= 1); }
