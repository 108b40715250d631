// The warp-wide tensor-core operations of backend/cuda/warp_mma.cuh on the CPU, with the
// fragment layouts of the PTX ISA (written out in warp_mma.cuh). Each lane posts its registers
// or its row address, the warp meets at a barrier, then each lane computes or reads what the
// ISA gives it; a second barrier keeps the posted values until every lane has used them.
// mma.sync multiplies 16-bit values exactly (their products fit in fp32) and sums in fp32.
//
// fragment_mutation (test-only) breaks one index on purpose, so that the fragment tests and the
// kernel tests can show that they fail on such a mistake:
//   1 A: registers 1 and 2 swapped (rows g+8 and columns 8-15 confused)
//   2 B: register 1 holds rows 2t, 2t+1 (the +8 dropped)
//   3 C/D: elements 2 and 3 in row g instead of g+8
//   4 A: the two halves of each register swapped
//   5 ldmatrix: lane l gets row l % 8 instead of l / 4
//   6 ldmatrix: .trans ignored
//   7 ldmatrix: row r of matrix m addressed by lane 4 r + m instead of 8 m + r
//   8 cp.async.wait_group leaves one more group in flight than asked
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_runtime_api.h"
#include "emulator_lanes.hpp"

namespace tessera_emulation {

int fragment_mutation = 0;

namespace {

float widen(uint16_t bits, bool bf16) {
  if (bf16) return __bfloat162float(__nv_bfloat16{bits});
  _Float16 half;
  std::memcpy(&half, &bits, sizeof half);
  return static_cast<float>(half);
}

uint16_t half_of(uint32_t word, int which) { return static_cast<uint16_t>(which == 0 ? word & 0xffffu : word >> 16); }

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "emulated warp matrix operation: %s\n", what);
  std::abort();
}

}  // namespace

namespace {
// A and B as matrices, decoded once per warp and operation (by the first lane to get there
// after the barrier) rather than by every lane: the emulation's costliest step otherwise.
struct DecodedOperands {
  uint64_t block = 0, operation = 0;
  float a[16][16], b[16][8];
};
DecodedOperands& decoded_for_warp(unsigned warp) {
  static std::vector<DecodedOperands> warps;
  if (warps.size() <= warp) warps.resize(warp + 1);
  return warps[warp];
}
}  // namespace

void mma_m16n8k16(bool bf16, float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  const unsigned me = lanes::current_thread(), base = me / 32 * 32;
  uint32_t* mine = lanes::words(me);
  for (int i = 0; i < 4; ++i) mine[i] = a[i];
  for (int i = 0; i < 2; ++i) mine[4 + i] = b[i];
  const uint64_t operation = ++mine[lanes::kWords - 1];  // this lane's count of mma operations
  sync_warp();
  DecodedOperands& decoded = decoded_for_warp(base / 32);
  if (decoded.block != lanes::block_serial() || decoded.operation != operation) {
    decoded.block = lanes::block_serial();
    decoded.operation = operation;
    for (unsigned lane = 0; lane < 32; ++lane) {
      const uint32_t* words = lanes::words(base + lane);
      const int g = static_cast<int>(lane / 4), t = static_cast<int>(lane % 4);
      for (int reg = 0; reg < 4; ++reg) {
        int slot = reg;
        if (fragment_mutation == 1 && (reg == 1 || reg == 2)) slot = 3 - reg;
        const int row = g + (slot % 2) * 8, col = 2 * t + (slot / 2) * 8;
        for (int h = 0; h < 2; ++h) {
          const int which = fragment_mutation == 4 ? 1 - h : h;
          decoded.a[row][col + h] = widen(half_of(words[reg], which), bf16);
        }
      }
      for (int reg = 0; reg < 2; ++reg) {
        const int row = 2 * t + (fragment_mutation == 2 ? 0 : reg * 8);
        for (int h = 0; h < 2; ++h) decoded.b[row + h][g] = widen(half_of(words[4 + reg], h), bf16);
      }
    }
  }
  const int g = static_cast<int>((me - base) / 4), t = static_cast<int>((me - base) % 4);
  float result[4];
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i >= 2 && fragment_mutation != 3 ? 8 : 0), col = 2 * t + i % 2;
    float sum = d[i];
    for (int k = 0; k < 16; ++k) sum += decoded.a[row][k] * decoded.b[k][col];
    result[i] = sum;
  }
  sync_warp();  // every lane has read the decoded operands (and the posted words) before the next operation
  for (int i = 0; i < 4; ++i) d[i] = result[i];
}

void ldmatrix(int matrices, bool trans, uint32_t* registers, const void* row_address) {
  const unsigned me = lanes::current_thread(), base = me / 32 * 32, lane = me - base;
  lanes::pointer(me) = row_address;
  sync_warp();
  if (fragment_mutation == 6) trans = false;
  for (int m = 0; m < matrices; ++m) {
    auto row_of = [&](int r) {
      const unsigned provider = fragment_mutation == 7 ? static_cast<unsigned>(4 * r + m) : static_cast<unsigned>(8 * m + r);
      const void* address = lanes::pointer(base + provider);
      if (reinterpret_cast<uintptr_t>(address) % 16 != 0) fail("ldmatrix row address not 16-byte aligned");
      return static_cast<const uint16_t*>(address);
    };
    const int quad = static_cast<int>(lane % 4);
    const int row = fragment_mutation == 5 ? static_cast<int>(lane % 8) : static_cast<int>(lane / 4);
    uint16_t low, high;
    if (!trans) {
      low = row_of(row)[2 * quad];
      high = row_of(row)[2 * quad + 1];
    } else {
      low = row_of(2 * quad)[row];
      high = row_of(2 * quad + 1)[row];
    }
    registers[m] = static_cast<uint32_t>(low) | (static_cast<uint32_t>(high) << 16);
  }
  sync_warp();
}

void cp_async_16(void* to, const void* from, bool valid) {
  if (reinterpret_cast<uintptr_t>(to) % 16 != 0 || (valid && reinterpret_cast<uintptr_t>(from) % 16 != 0))
    fail("cp.async of 16 bytes with an address not 16-byte aligned");
  lanes::async_copies().open.push_back({to, from, valid});
}

void cp_async_commit() {
  lanes::AsyncCopies& copies = lanes::async_copies();
  copies.committed.push_back(std::move(copies.open));
  copies.open.clear();
}

void cp_async_wait(int pending) {
  if (fragment_mutation == 8) ++pending;
  lanes::AsyncCopies& copies = lanes::async_copies();
  while (static_cast<int>(copies.committed.size()) > pending) {
    lanes::complete(copies.committed.front());
    copies.committed.erase(copies.committed.begin());
  }
}

}  // namespace tessera_emulation
