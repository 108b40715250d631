// The command line's operator new (cli/large_allocations.cpp), linked into this test alone.
#include <catch2/catch.hpp>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{2} << 20;

// The VmFlags line of the mapping in /proc/self/smaps that holds `address`.
std::string vm_flags_at(const void* address) {
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t low = 0, high = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> low >> dash >> high && dash == '-') {
      inside = target >= low && target < high;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// Whether this kernel takes huge-page advice at all (transparent huge pages built in).
bool kernel_takes_huge_page_advice() {
  const size_t bytes = 4 * kHugePageBytes;
  void* region = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return false;
  const bool taken = madvise(region, bytes, MADV_HUGEPAGE) == 0;
  munmap(region, bytes);
  return taken;
}

}  // namespace

TEST_CASE("large blocks are advised as huge pages, small ones are not, and every block works", "[large_allocations]") {
  const bool advised_kernel = kernel_takes_huge_page_advice();
  // 64 MiB: its whole huge pages carry the advice (VmFlags "hg") where the kernel takes it.
  auto large = std::make_unique<char[]>(std::size_t{64} << 20);
  std::memset(large.get(), 1, std::size_t{64} << 20);
  const auto start = reinterpret_cast<std::uintptr_t>(large.get());
  const std::uintptr_t first_whole = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const std::string flags = vm_flags_at(reinterpret_cast<const void*>(first_whole));
  REQUIRE_FALSE(flags.empty());
  CHECK((flags.find(" hg") != std::string::npos) == advised_kernel);
  CHECK(large[0] == 1);
  CHECK(large[(std::size_t{64} << 20) - 1] == 1);
  // 8 MiB, below the 16 MiB threshold though it holds whole huge pages: no advice.
  const std::size_t small_bytes = std::size_t{8} << 20;
  auto small = std::make_unique<char[]>(small_bytes);
  std::memset(small.get(), 2, small_bytes);
  const auto small_start = reinterpret_cast<std::uintptr_t>(small.get());
  const std::uintptr_t small_whole = (small_start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  CHECK(vm_flags_at(reinterpret_cast<const void*>(small_whole)).find(" hg") == std::string::npos);
  // Sizes around the threshold, zero included, filled and read back through vectors.
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, (std::size_t{16} << 20) - 1, std::size_t{16} << 20,
                            (std::size_t{16} << 20) + 4097, std::size_t{40} << 20}) {
    std::vector<std::uint8_t> block(bytes, 7);
    std::size_t sevens = 0;
    for (std::uint8_t byte : block) sevens += byte == 7;
    CHECK(sevens == bytes);
  }
}

TEST_CASE("blocks of 16 MiB and more are mappings of their own, handed back when freed", "[large_allocations]") {
  // glibc alone raises its threshold to the size of a mapped block once it is freed (up to
  // 32 MiB), and then serves a 20 MiB block from the heap, where it stays resident when freed.
  { std::vector<char> raise(std::size_t{30} << 20, 1); }
  const std::size_t mapped_before = mallinfo2().hblkhd;
  const std::size_t bytes = std::size_t{20} << 20;
  auto block = std::make_unique<char[]>(bytes);
  block[bytes - 1] = 3;
  CHECK(mallinfo2().hblkhd >= mapped_before + bytes);
  CHECK(block[bytes - 1] == 3);
  block.reset();
  CHECK(mallinfo2().hblkhd == mapped_before);
}
