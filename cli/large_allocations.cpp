// The command line's operator new: large blocks on transparent huge pages.
//
// At 1,000 GPUs a schedule, its dependency analysis and a simulation's tables are arrays of
// hundreds of megabytes, made and dropped once per candidate of a plan. With 4 KiB pages the
// kernel faulted in and zeroed each page on first touch: about 7 million minor faults and 15 to
// 18 s of system time in `plan --gpus 1024 --model analytic`, and the walks over those arrays
// missed the TLB. So the whole 2 MiB pages inside a block of 16 MiB or more are advised as huge
// pages (madvise MADV_HUGEPAGE, which the kernel honours where transparent huge pages are
// "madvise" or "always"; Debian's default is "madvise"): the same plan then took 0.3 to 0.5
// million faults and 12 s of system time, at the same peak memory (in turns on this machine:
// 66.3 and 57.2 s before, 52.8 and 58.0 s after). Only advice: the blocks are plain malloc's,
// freed with free.
//
// Blocks of 16 MiB and more are also always their own mappings, handed back to the kernel when
// freed (M_MMAP_THRESHOLD fixed at 16 MiB). glibc otherwise raises its threshold to the size of
// each mapped block freed, up to 32 MiB: arrays of 16 to 32 MiB made and dropped during a check
// then came from the heap, and what was freed in its middle stayed resident. A contiguous ring at
// 1,024 GPUs held 112 MB of such free heap after its check (mallinfo2: 616 MB resident, 504
// with the threshold fixed), and `plan --gpus 1024 --model analytic` peaked about 90 MB higher.
//
// Only the `tessera` executable is built with this file: the libraries allocate as usual, and
// sanitizer builds keep the sanitizer's own operator new (CMakeLists.txt leaves this file out).
#include <malloc.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
constexpr std::size_t kLargeBytes = std::size_t{16} << 20;

void* allocate(std::size_t size) {
  if (size == 0) size = 1;
  while (true) {
    void* block = std::malloc(size);
    // Advice only, on the whole huge pages inside the block: where the kernel refuses it, or the
    // block holds none, it is ordinary pages.
    if (block != nullptr && size >= kLargeBytes) {
      const auto start = reinterpret_cast<std::uintptr_t>(block);
      const std::uintptr_t first = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
      const std::uintptr_t end = (start + size) / kHugePageBytes * kHugePageBytes;
      if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
    }
    if (block != nullptr) return block;
    // As the standard operator new does: the new-handler may free memory and let it try again.
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

// Before main, as the program's first allocations are made (advice only where glibc refuses it).
[[maybe_unused]] const bool kLargeBlocksMapped = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLargeBytes)) == 1;

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }
