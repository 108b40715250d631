// ReadOnceBlocks (values read back once, in order, each block freed when read) and
// UninitializedAllocator (a vector made at a size writes none of it): the two halves of the
// checker's copy of its dependency lists into op order (schedules/src/analysis.cpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <unistd.h>
#include <vector>

#include "tessera/core/read_once_blocks.hpp"
#include "tessera/core/uninitialized_allocator.hpp"

using namespace tessera;

namespace {
uint32_t take_one(ReadOnceBlocks<uint32_t>& values) {
  uint32_t value = 0;
  values.take(1, &value);
  return value;
}
}  // namespace

TEST_CASE("values come back in the order appended, and each block goes once its last is read", "[read_once_blocks]") {
  ReadOnceBlocks<uint32_t> values(4, 100);  // blocks of 4
  for (uint32_t value = 0; value < 10; ++value) values.push_back(value * 3);
  CHECK(values.size() == 10);
  CHECK(values.left() == 10);
  CHECK(values.blocks_held() == 3);  // ceil(10 / 4)
  std::vector<uint32_t> read;
  for (int k = 0; k < 3; ++k) read.push_back(take_one(values));
  CHECK(values.blocks_held() == 3);  // the first block's last (the 4th) is not read yet
  read.push_back(take_one(values));
  CHECK(values.blocks_held() == 2);
  while (values.left() > 0) read.push_back(take_one(values));
  CHECK(values.blocks_held() == 0);
  CHECK(read == std::vector<uint32_t>{0, 3, 6, 9, 12, 15, 18, 21, 24, 27});
}

TEST_CASE("values taken several at once cross blocks as one at a time would", "[read_once_blocks]") {
  ReadOnceBlocks<uint32_t> values(3, 3);  // blocks of 3: {0 1 2} {3 4 5} {6 7 8} {9}
  for (uint32_t value = 0; value < 10; ++value) values.push_back(value);
  std::vector<uint32_t> read(10, 99);
  values.take(2, read.data());      // 0 1: within the first block
  values.take(5, read.data() + 2);  // 2 .. 6: the first block's last, the whole second, into the third
  CHECK(values.blocks_held() == 2);
  values.take(0, read.data() + 7);  // nothing
  values.take(3, read.data() + 7);  // 7 8 9: to the end
  values.take(0, read.data() + 10);  // nothing, with no block left (an op without dependencies, last)
  CHECK(values.left() == 0);
  CHECK(values.blocks_held() == 0);
  CHECK(read == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("a whole number of blocks, one value, and none", "[read_once_blocks]") {
  ReadOnceBlocks<uint32_t> eight(4, 8);
  for (uint32_t value = 0; value < 8; ++value) eight.push_back(value);
  CHECK(eight.blocks_held() == 2);
  for (uint32_t value = 0; value < 8; ++value) CHECK(take_one(eight) == value);
  CHECK(eight.blocks_held() == 0);

  ReadOnceBlocks<uint32_t> one(1, 0);
  one.push_back(42);
  CHECK(take_one(one) == 42);
  CHECK(one.left() == 0);

  ReadOnceBlocks<uint32_t> none(1 << 20, 0);
  CHECK(none.size() == 0);
  CHECK(none.left() == 0);
}

TEST_CASE("a small expected count takes a small first block, not a whole one", "[read_once_blocks]") {
  // A check of a small schedule must not map a 16 MiB block: 3 values expected, 2^20 per block.
  ReadOnceBlocks<uint32_t> values(1 << 20, 3);
  for (uint32_t value = 0; value < 5; ++value) values.push_back(value);  // (more than expected: it grows)
  CHECK(values.blocks_held() == 1);
  for (uint32_t value = 0; value < 5; ++value) CHECK(take_one(values) == value);
}

namespace {
// Resident bytes of this process, from /proc/self/statm (its second field, in pages).
int64_t resident_bytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  REQUIRE(file != nullptr);
  long size = 0, resident = 0;
  REQUIRE(std::fscanf(file, "%ld %ld", &size, &resident) == 2);
  std::fclose(file);
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}
}  // namespace

TEST_CASE("UninitializedAllocator keeps the values it is given", "[uninitialized_allocator]") {
  std::vector<int, UninitializedAllocator<int>> values(3, 7);
  values.push_back(8);
  values.insert(values.begin(), 6);
  CHECK(values == std::vector<int, UninitializedAllocator<int>>{6, 7, 7, 7, 8});
  auto copy = values;
  copy[0] = 1;
  CHECK(values[0] == 6);
  CHECK(copy.size() == 5);
}

TEST_CASE("a vector made at a size with UninitializedAllocator writes none of it; std::allocator's writes all", "[uninitialized_allocator]") {
  // 128 MiB, above glibc's largest mmap threshold (32 MiB): a fresh mapping, resident only where
  // written. std::vector's own allocator zeroes it, which makes it all resident: the control
  // that shows this measure sees the difference.
  // (Compared with the control, not with a fixed figure: under AddressSanitizer both also
  // write the allocation's shadow, an eighth of its size.)
  constexpr size_t kCount = size_t{32} << 20;
  constexpr int64_t kBytes = static_cast<int64_t>(kCount * sizeof(uint32_t));
  int64_t zeroed_growth = 0;
  {
    const int64_t before = resident_bytes();
    std::vector<uint32_t> zeroed(kCount);
    zeroed_growth = resident_bytes() - before;
    CHECK(zeroed[kCount / 2] == 0);
  }
  CHECK(zeroed_growth > kBytes / 2);
  const int64_t before = resident_bytes();
  std::vector<uint32_t, UninitializedAllocator<uint32_t>> unwritten(kCount);
  CHECK(resident_bytes() - before < zeroed_growth / 4);
  // Written a page in every 64 pages, it grows by about those pages alone.
  const size_t stride = 64 * static_cast<size_t>(sysconf(_SC_PAGESIZE)) / sizeof(uint32_t);
  for (size_t at = 0; at < kCount; at += stride) unwritten[at] = static_cast<uint32_t>(at);
  CHECK(resident_bytes() - before < zeroed_growth / 4);
  for (size_t at = 0; at < kCount; at += stride) REQUIRE(unwritten[at] == static_cast<uint32_t>(at));
}
