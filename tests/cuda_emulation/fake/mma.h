#pragma once
// WMMA 16x16x16 fragments emulated with whole matrices. Operand fragments hold the full tile in
// every lane; an accumulator's element i belongs to lane i % 32, which alone computes and stores
// it (CUDA also spreads accumulators over the lanes, in a layout the kernels never see). So a
// kernel that reads a stored tile written by other lanes must synchronise the warp first, as it
// must on a GPU, or the emulator's scheduling shows the race as wrong numbers.
#include <type_traits>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_runtime_api.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T = float, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulation has the 16x16x16 shape only");
  float element[16 * 16] = {};  // [row][column]
};

namespace detail {
inline float widen(float value) { return value; }
inline float widen(__nv_bfloat16 value) { return __bfloat162float(value); }
inline float widen(__half value) { return __half2float(value); }
}  // namespace detail

template <typename Use, typename T, typename Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout>& into, const T* from, unsigned ldm) {
  static_assert(std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      into.element[r * 16 + c] = detail::widen(std::is_same_v<Layout, row_major> ? from[r * ldm + c] : from[r + c * ldm]);
}

template <typename T>
void fill_fragment(fragment<accumulator, 16, 16, 16, T>& into, float value) {
  for (float& element : into.element) element = value;
}

template <typename TA, typename LA, typename TB, typename LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, TA, LA>& a,
              const fragment<matrix_b, 16, 16, 16, TB, LB>& b, const fragment<accumulator, 16, 16, 16, float>& c) {
  for (int i = static_cast<int>(threadIdx.x % 32); i < 16 * 16; i += 32) {
    const int r = i / 16, col = i % 16;
    float sum = c.element[i];
    for (int k = 0; k < 16; ++k) sum += a.element[r * 16 + k] * b.element[k * 16 + col];
    d.element[i] = sum;
  }
}

inline void store_matrix_sync(float* into, const fragment<accumulator, 16, 16, 16, float>& from, unsigned ldm, layout_t layout) {
  for (int i = static_cast<int>(threadIdx.x % 32); i < 16 * 16; i += 32) {
    const int r = i / 16, c = i % 16;
    (layout == mem_row_major ? into[r * ldm + c] : into[r + c * ldm]) = from.element[i];
  }
}

}  // namespace nvcuda::wmma
