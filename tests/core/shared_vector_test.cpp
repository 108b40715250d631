// SharedVector: copies share one buffer until one is changed (core/shared_vector.hpp).
#include <catch2/catch.hpp>

#include <thread>
#include <utility>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/core/shared_vector.hpp"

using namespace tessera;

namespace {
std::vector<int> values_of(const SharedVector<int>& shared) { return shared.vector(); }
}  // namespace

TEST_CASE("a copy shares the buffer until one side changes, and the other never sees the change", "[shared_vector]") {
  SharedVector<int> original(std::vector<int>{1, 2, 3});
  SharedVector<int> copy = original;
  CHECK(copy.shares_buffer_with(original));
  // Reading through const access keeps the buffer shared.
  const SharedVector<int>& read = copy;
  CHECK(read[1] == 2);
  CHECK(read.size() == 3);
  CHECK(copy.shares_buffer_with(original));

  SECTION("element write") {
    copy[1] = 20;
    CHECK_FALSE(copy.shares_buffer_with(original));
    CHECK(values_of(copy) == std::vector<int>{1, 20, 3});
    CHECK(values_of(original) == std::vector<int>{1, 2, 3});
  }
  SECTION("append") {
    copy.push_back(4);
    CHECK(values_of(copy) == std::vector<int>{1, 2, 3, 4});
    CHECK(values_of(original) == std::vector<int>{1, 2, 3});
  }
  SECTION("insert and erase with positions taken while the buffer was shared") {
    // The positions point into the shared buffer; the change happens on this copy's clone.
    auto second = std::as_const(copy).begin() + 1;
    copy.insert(second, 9);
    CHECK(values_of(copy) == std::vector<int>{1, 9, 2, 3});
    SharedVector<int> other = original;
    other.erase(std::as_const(other).begin());
    CHECK(values_of(other) == std::vector<int>{2, 3});
    SharedVector<int> range = original;
    range.erase(std::as_const(range).begin(), std::as_const(range).begin() + 2);
    CHECK(values_of(range) == std::vector<int>{3});
    CHECK(values_of(original) == std::vector<int>{1, 2, 3});
  }
  SECTION("the original changes, the copy keeps its values") {
    original.clear();
    original.push_back(7);
    CHECK(values_of(original) == std::vector<int>{7});
    CHECK(values_of(copy) == std::vector<int>{1, 2, 3});
  }
  SECTION("a sole owner changes in place") {
    SharedVector<int> sole(std::vector<int>{5, 6});
    const int* before = std::as_const(sole).data();
    sole[0] = 50;
    CHECK(std::as_const(sole).data() == before);
    CHECK(values_of(sole) == std::vector<int>{50, 6});
  }
}

TEST_CASE("an empty or moved-from shared vector reads as empty and can be filled", "[shared_vector]") {
  SharedVector<int> empty;
  CHECK(empty.empty());
  CHECK(std::as_const(empty).begin() == std::as_const(empty).end());
  SharedVector<int> filled(std::vector<int>{1});
  SharedVector<int> moved = std::move(filled);
  CHECK(values_of(moved) == std::vector<int>{1});
  CHECK(filled.size() == 0);  // NOLINT(bugprone-use-after-move): moved-from is empty by design
  filled.push_back(2);
  CHECK(values_of(filled) == std::vector<int>{2});
  CHECK(SharedVector<int>(std::vector<int>{1, 2}) == SharedVector<int>{1, 2});
  CHECK_FALSE(SharedVector<int>{1, 2} == SharedVector<int>{2, 1});
}

TEST_CASE("a copied schedule shares its program, and changing one copy's ops leaves the other's", "[shared_vector]") {
  Schedule schedule;
  schedule.gpus = 2;
  schedule.ops.push_back(Op{OpKind::compute, Pass::forward, 0, 0, -1, 0, 1});
  schedule.blocks.push_back(BlockRef{0, 0, 0});
  schedule.items.push_back(DataItem{DataKind::KV, 0, 1});
  Schedule copy = schedule;
  copy.problem.batch = schedule.problem.batch + 3;
  CHECK(copy.ops.shares_buffer_with(schedule.ops));
  CHECK(copy.blocks.shares_buffer_with(schedule.blocks));
  CHECK(copy.items.shares_buffer_with(schedule.items));
  copy.ops[0].gpu = 1;
  CHECK(schedule.ops[0].gpu == 0);
  CHECK(std::as_const(copy).ops[0].gpu == 1);
  CHECK(copy.blocks.shares_buffer_with(schedule.blocks));
}

TEST_CASE("copies read on several threads while each thread changes its own copy", "[shared_vector]") {
  const SharedVector<int> shared(std::vector<int>(1000, 1));
  std::vector<std::thread> threads;
  // Catch's assertions are not thread-safe: each thread records, the main thread checks.
  std::vector<long> sums(4, 0), own_sums(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SharedVector<int> own = shared;
      for (int round = 0; round < 50; ++round) {
        SharedVector<int> reader = shared;
        long sum = 0;
        for (int value : std::as_const(reader)) sum += value;
        sums[static_cast<size_t>(t)] += sum;
        own[static_cast<size_t>(round)] = t + 2;
      }
      for (int value : std::as_const(own)) own_sums[static_cast<size_t>(t)] += value;
    });
  }
  for (auto& thread : threads) thread.join();
  // Each thread's own copy: 50 entries set to t + 2, the other 950 still 1.
  for (int t = 0; t < 4; ++t) CHECK(own_sums[static_cast<size_t>(t)] == 950 + 50L * (t + 2));
  for (long sum : sums) CHECK(sum == 50L * 1000);
  for (int value : shared) CHECK(value == 1);
}
