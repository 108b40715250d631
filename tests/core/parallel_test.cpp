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
  std::atomic<size_t> started{0};
  auto work = [&](size_t index) {
    ++started;
    if (index == 10) throw std::runtime_error("item 10 failed");
  };
  // One thread takes the items in order: items 0 to 10 start, none after the failure.
  CHECK_THROWS_WITH(parallel_for(10'000, 1, work), "item 10 failed");
  CHECK(started.load() == 11);
  // Several threads: the error still comes back here (how many other items ran before the
  // failure was seen depends on the scheduler, so only the bound of all items is certain).
  started = 0;
  CHECK_THROWS_WITH(parallel_for(10'000, 3, work), "item 10 failed");
  CHECK(started.load() <= 10'000);
}

TEST_CASE("default_threads is at least one", "[parallel]") { CHECK(default_threads() >= 1); }
