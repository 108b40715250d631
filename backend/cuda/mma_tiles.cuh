#pragma once
// Pieces shared by the mma kernels (attention_mma.cu, attention_mma_backward.cu): shared-memory
// tiles filled by cp.async with padded rows, and the token range of a run of rows (what decides
// whether a tile is skipped or needs its mask evaluated), reduced within one warp.
#include <climits>
#include <cstdint>

#include "attention_kernels.hpp"
#include "warp_mma.cuh"

// Register arrays (fragments, accumulators) stay in registers only if every loop indexing them
// is unrolled; nvcc does not always do it unasked.
#ifdef TESSERA_CUDA_EMULATION
#define TESSERA_UNROLL
#else
#define TESSERA_UNROLL _Pragma("unroll")
#endif

namespace tessera::backend::cuda {

// Shared tiles keep rows of D elements D + 8 apart: eight 16-byte rows of an ldmatrix then fall
// in eight different bank groups (a row start moves 16 bytes further each row), without a swizzle.
template <int D>
__host__ __device__ constexpr int padded_row() {
  return D + 8;
}

// Issues (does not wait for) cp.async copies of tile[r][0..D) = rows[first_row + r] for
// r < tile_rows, 16 bytes per copy spread over the CTA; rows at or past `valid_rows` become zero.
template <typename T, int D>
__device__ inline void issue_tile(T* tile, int tile_rows, const T* rows, int64_t row_stride, int first_row, int valid_rows) {
  static_assert(sizeof(T) == 2 && D % 8 == 0, "16-bit elements, rows of whole 16-byte pieces");
  constexpr int kPieces = D / 8;
  for (int i = static_cast<int>(threadIdx.x); i < tile_rows * kPieces; i += static_cast<int>(blockDim.x)) {
    const int r = i / kPieces, piece = i % kPieces;
    const int row = first_row + r;
    const bool valid = row < valid_rows;
    cp_async_16(tile + r * padded_row<D>() + piece * 8, valid ? rows + row * row_stride + piece * 8 : rows, valid);
  }
}

struct TokenRange {
  long long lowest = LLONG_MAX, highest = LLONG_MIN;  // empty: lowest > highest
};

// The lowest and highest of tokens[first .. first + count) below `valid`, the same in every lane
// of the calling warp (all 32 lanes must call it).
__device__ inline TokenRange warp_token_range(const int64_t* tokens, int first, int count, int valid) {
  TokenRange range;
  for (int i = static_cast<int>(threadIdx.x % 32); i < count; i += 32) {
    const int index = first + i;
    if (index >= valid) break;
    const long long token = tokens[index];
    range.lowest = token < range.lowest ? token : range.lowest;
    range.highest = token > range.highest ? token : range.highest;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const long long low = __shfl_xor_sync(0xffffffffu, range.lowest, offset);
    const long long high = __shfl_xor_sync(0xffffffffu, range.highest, offset);
    range.lowest = low < range.lowest ? low : range.lowest;
    range.highest = high > range.highest ? high : range.highest;
  }
  return range;
}

}  // namespace tessera::backend::cuda
