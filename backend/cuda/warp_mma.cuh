#pragma once
// The warp-level tensor-core operations of the mma kernels (attention_mma.cu and
// attention_mma_backward.cu), each behind a small device function: inline PTX under nvcc, and
// under the tests' CPU emulation (tests/cuda_emulation) an emulated warp-wide operation that
// hands every lane exactly the elements the PTX ISA gives it. So one kernel source serves both,
// and the emulation checks the kernels' fragment indexing.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16 with floating point type" and
// "ldmatrix"); lane = 4 * group + thread_in_group, group = lane / 4, t = lane % 4:
//   A (16 x 16, row): a[0] = (row g,   cols 2t, 2t+1)   a[1] = (row g+8, cols 2t, 2t+1)
//                     a[2] = (row g,   cols 2t+8, 2t+9) a[3] = (row g+8, cols 2t+8, 2t+9)
//   B (16 x 8, col):  b[0] = (rows 2t, 2t+1, col g)     b[1] = (rows 2t+8, 2t+9, col g)
//   C, D (16 x 8, fp32): c[0], c[1] = (row g, cols 2t, 2t+1); c[2], c[3] = (row g+8, same cols)
// Each 32-bit register holds two 16-bit elements, the lower column (A) or row (B) in the low half.
//   ldmatrix .m8n8 .x1/.x2/.x4 .b16: lane 8 m + r gives the address of row r of matrix m (16
//   contiguous bytes, 16-byte aligned); register m of lane l holds row l / 4, columns 2 (l % 4)
//   and 2 (l % 4) + 1 of matrix m; with .trans, rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4.
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

// Two 16-bit elements in one register, `low` in the low half (the lower column or row).
template <typename T>
__device__ inline uint32_t pack_pair(float low, float high) {
  uint16_t lo, hi;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    lo = __bfloat16_as_ushort(__float2bfloat16_rn(low));
    hi = __bfloat16_as_ushort(__float2bfloat16_rn(high));
  } else {
    lo = __half_as_ushort(__float2half_rn(low));
    hi = __half_as_ushort(__float2half_rn(high));
  }
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

// d += a b: mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32.
template <typename T>
__device__ inline void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::mma_m16n8k16(std::is_same_v<T, __nv_bfloat16>, d, a, b);
#else
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

#ifndef TESSERA_CUDA_EMULATION
__device__ inline unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}
#endif

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16; `row` is this lane's row address.
template <bool kTrans>
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::ldmatrix(4, kTrans, r, row);
#else
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_address(row)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_address(row)));
#endif
}

// .x2: lanes 0-15 give the addresses.
template <bool kTrans>
__device__ inline void ldmatrix_x2(uint32_t (&r)[2], const void* row) {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::ldmatrix(2, kTrans, r, row);
#else
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(shared_address(row)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(shared_address(row)));
#endif
}

// .x1: lanes 0-7 give the addresses.
template <bool kTrans>
__device__ inline void ldmatrix_x1(uint32_t (&r)[1], const void* row) {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::ldmatrix(1, kTrans, r, row);
#else
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(shared_address(row)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(shared_address(row)));
#endif
}

// cp.async.cg.shared.global of 16 bytes; with `valid` false the 16 shared bytes are zeroed
// (source size 0) and `from` is not read.
__device__ inline void cp_async_16(void* to, const void* from, bool valid) {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::cp_async_16(to, from, valid);
#else
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(to)), "l"(from), "r"(source_bytes));
#endif
}

// Closes this thread's open group of copies (cp.async.commit_group).
__device__ inline void cp_async_commit() {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::cp_async_commit();
#else
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `kPending` of this thread's committed groups are still in flight
// (cp.async.wait_group); other threads' copies need a barrier after it to be seen.
template <int kPending>
__device__ inline void cp_async_wait() {
#ifdef TESSERA_CUDA_EMULATION
  tessera_emulation::cp_async_wait(kPending);
#else
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

}  // namespace tessera::backend::cuda
