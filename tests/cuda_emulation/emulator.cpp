// Runs CUDA kernels compiled as C++ (with the headers in fake/) on the CPU: every CUDA thread of
// a block is a fiber with its own stack, __syncthreads and __syncwarp are barriers that open as
// soon as their scope has arrived, warp shuffles go through a per-warp exchange, threads run in
// a random (seeded) order, and blocks run one after another. What it checks is the kernels'
// index arithmetic, masks, softmax and reductions, and that their barriers are where they must
// be; not their speed. tessera_emulation::launch is declared in fake/cuda_runtime_api.h, where
// the kernels' launcher (backend/cuda/kernel_launch.cuh) finds it.
#include "cuda_runtime_api.h"
#include "emulator_lanes.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera_emulation {

namespace {

namespace context = boost::context;

enum class LaneState { ready, at_block_barrier, at_warp_barrier, done };

// One CUDA thread: a fiber with its own stack, run until it reaches a barrier or returns.
struct Lane {
  context::fiber self;
  context::fiber scheduler;
  LaneState state = LaneState::ready;
  unsigned index = 0;
  lanes::AsyncCopies copies;
};

struct BlockState {
  std::vector<Lane> lanes;
  std::vector<float> exchange;
  std::vector<uint64_t> exchange_64;
  std::vector<uint32_t> words;        // lanes::kWords a thread
  std::vector<const void*> pointers;  // one a thread
  std::vector<unsigned char> shared;
  // How many threads wait at each warp's barrier, at the block's, and have returned.
  std::vector<size_t> warp_waiting, warp_done;
  size_t block_waiting = 0, done = 0;
};

BlockState* current_block = nullptr;
uint64_t blocks_run = 0;
Lane* current_lane = nullptr;

void wait_at(LaneState barrier) {
  Lane* lane = current_lane;
  lane->state = barrier;
  lane->scheduler = std::move(lane->scheduler).resume();
  current_lane = lane;
}

// After `lane` stopped (at a barrier or for good): releases the barrier of its warp and the
// block's barrier if every live thread of that scope now waits there, adding them to `ready`.
void release_barriers(BlockState& block, const Lane& lane, std::vector<unsigned>& ready) {
  const size_t warp = lane.index / 32;
  if (lane.state == LaneState::done) {
    ++block.warp_done[warp];
    ++block.done;
  } else if (lane.state == LaneState::at_warp_barrier) {
    ++block.warp_waiting[warp];
  } else {
    ++block.block_waiting;
  }
  const size_t first = warp * 32, last = std::min(first + 32, block.lanes.size());
  if (block.warp_waiting[warp] > 0 && block.warp_waiting[warp] + block.warp_done[warp] == last - first) {
    for (size_t t = first; t < last; ++t)
      if (block.lanes[t].state == LaneState::at_warp_barrier) {
        block.lanes[t].state = LaneState::ready;
        ready.push_back(static_cast<unsigned>(t));
      }
    block.warp_waiting[warp] = 0;
  }
  if (block.block_waiting > 0 && block.block_waiting + block.done == block.lanes.size()) {
    for (Lane& other : block.lanes)
      if (other.state == LaneState::at_block_barrier) {
        other.state = LaneState::ready;
        ready.push_back(other.index);
      }
    block.block_waiting = 0;
  }
}

}  // namespace

unsigned char* dynamic_shared_memory() {
  // 128-byte aligned, more than the kernels need.
  auto address = reinterpret_cast<uintptr_t>(current_block->shared.data());
  return current_block->shared.data() + ((128 - address % 128) % 128);
}

void sync_block() { wait_at(LaneState::at_block_barrier); }
void sync_warp() { wait_at(LaneState::at_warp_barrier); }

float exchange_in_warp(float value, int from_lane) {
  const unsigned me = current_lane->index, base = me / 32 * 32;
  current_block->exchange[me] = value;
  sync_warp();
  const float result = current_block->exchange[base + static_cast<unsigned>(from_lane)];
  sync_warp();
  return result;
}

uint64_t exchange_in_warp_64(uint64_t value, int from_lane) {
  const unsigned me = current_lane->index, base = me / 32 * 32;
  current_block->exchange_64[me] = value;
  sync_warp();
  const uint64_t result = current_block->exchange_64[base + static_cast<unsigned>(from_lane)];
  sync_warp();
  return result;
}

namespace lanes {
unsigned current_thread() { return current_lane->index; }
uint64_t block_serial() { return blocks_run; }
uint32_t* words(unsigned thread) { return current_block->words.data() + static_cast<size_t>(thread) * kWords; }
const void*& pointer(unsigned thread) { return current_block->pointers[thread]; }
AsyncCopies& async_copies() { return current_lane->copies; }
void complete(std::vector<AsyncCopy>& copies) {
  for (const AsyncCopy& copy : copies) {
    if (copy.valid) std::memcpy(copy.to, copy.from, 16);
    else std::memset(copy.to, 0, 16);
  }
  copies.clear();
}
}  // namespace lanes

void launch(dim3 grid, dim3 block, size_t dynamic_shared_bytes, const std::function<void()>& kernel) {
  const unsigned threads = block.x * block.y * block.z;
  // Threads run in a random order (fixed seed, so a failure repeats), each until it reaches a
  // barrier, and a barrier opens as soon as its scope has arrived: warps and threads get ahead
  // of each other, so a barrier missing between a write and another thread's read (or a read
  // and another thread's later write) shows as wrong numbers rather than passing by luck.
  std::mt19937 order_random(12345);
  // Stacks are reused from block to block (the kernels need a few kilobytes; 64 KiB is ample).
  context::pooled_fixedsize_stack stacks(64 * 1024, threads);
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        BlockState state;
        state.lanes.resize(threads);
        state.exchange.assign(threads, 0.0f);
        state.exchange_64.assign(threads, 0);
        state.words.assign(static_cast<size_t>(threads) * lanes::kWords, 0);
        state.pointers.assign(threads, nullptr);
        state.warp_waiting.assign((threads + 31) / 32, 0);
        state.warp_done.assign((threads + 31) / 32, 0);
        state.shared.assign(dynamic_shared_bytes + 128, 0);
        current_block = &state;
        ++blocks_run;
        blockIdx = dim3(x, y, z);
        blockDim = block;
        gridDim = grid;
        for (unsigned t = 0; t < threads; ++t) {
          Lane& lane = state.lanes[t];
          lane.index = t;
          lane.self = context::fiber(std::allocator_arg, stacks,
                                     [&, t](context::fiber&& scheduler) {
                                       Lane& me = state.lanes[t];
                                       me.scheduler = std::move(scheduler);
                                       kernel();
                                       // Copies a thread never waited for still land (before the block ends).
                                       for (auto& group : me.copies.committed) lanes::complete(group);
                                       lanes::complete(me.copies.open);
                                       me.state = LaneState::done;
                                       return std::move(me.scheduler);
                                     });
        }
        // Run one thread at a time, picked at random, until it stops; release what it completes.
        std::vector<unsigned> ready(threads);
        for (unsigned t = 0; t < threads; ++t) ready[t] = t;
        while (!ready.empty()) {
          const size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(order_random);
          const unsigned t = ready[pick];
          ready[pick] = ready.back();
          ready.pop_back();
          Lane& lane = state.lanes[t];
          // Every emulated thread runs on this one OS thread: its indices are set at each switch.
          current_lane = &lane;
          threadIdx = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
          lane.self = std::move(lane.self).resume();
          release_barriers(state, lane, ready);
        }
        if (!std::all_of(state.lanes.begin(), state.lanes.end(), [](const Lane& lane) { return lane.state == LaneState::done; }))
          throw std::runtime_error("emulated block (" + std::to_string(x) + ", " + std::to_string(y) +
                                   "): threads wait at barriers that can never be released (a divergent "
                                   "__syncthreads or __syncwarp)");
        current_block = nullptr;
      }
}

}  // namespace tessera_emulation

// One OS thread runs every emulated thread, so plain read-modify-writes are atomic here.
float atomicAdd(float* address, float value) {
  const float old = *address;
  *address = old + value;
  return old;
}

unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  const unsigned long long old = *address;
  *address = std::min(old, value);
  return old;
}

unsigned long long atomicMax(unsigned long long* address, unsigned long long value) {
  const unsigned long long old = *address;
  *address = std::max(old, value);
  return old;
}
