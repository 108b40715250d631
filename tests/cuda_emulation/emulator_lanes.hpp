#pragma once
// What the emulator (emulator.cpp) lends the warp-wide operations (emulated_warp_matrix.cpp):
// the running thread's index in its block, a few words per thread that its warp can read
// between two warp barriers, and the thread's cp.async copies not yet waited for.
#include <cstdint>
#include <vector>

namespace tessera_emulation::lanes {

constexpr int kWords = 16;  // per thread: enough for an mma's A, B and C registers

struct AsyncCopy {
  void* to;
  const void* from;
  bool valid;  // false: 16 zero bytes, `from` not read
};
struct AsyncCopies {
  std::vector<AsyncCopy> open;                   // since the last commit
  std::vector<std::vector<AsyncCopy>> committed;  // oldest first
};

unsigned current_thread();
uint64_t block_serial();                     // distinct for every block run since the start
uint32_t* words(unsigned thread);            // kWords words of `thread` in the running block
const void*& pointer(unsigned thread);       // one address per thread (ldmatrix rows)
AsyncCopies& async_copies();                 // the running thread's
// Completes `copies` in order (the emulator also calls it for what a thread leaves in flight).
void complete(std::vector<AsyncCopy>& copies);

}  // namespace tessera_emulation::lanes
