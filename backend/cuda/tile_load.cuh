#pragma once
// Shared-memory tiles of 16-bit rows, filled by the whole CTA 16 bytes (8 elements) at a time.
// Global rows are 16-byte aligned: buffers start at cudaMalloc's 256-byte alignment and every
// row, head and K/V offset is a multiple of the head dimension, itself a multiple of 8.
#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

// tile[r][0..D) = rows[first_row + r] (row i starting at rows + i * row_stride elements) for
// r < tile_rows; rows at or past `valid_rows` are zero.
template <typename T, int D>
__device__ inline void load_tile(T* tile, int tile_rows, const T* rows, int64_t row_stride, int first_row, int valid_rows) {
  static_assert(sizeof(T) == 2 && D % 8 == 0, "16-bit elements, rows of whole 16-byte pieces");
  constexpr int kPieces = D / 8;
  for (int i = static_cast<int>(threadIdx.x); i < tile_rows * kPieces; i += static_cast<int>(blockDim.x)) {
    const int r = i / kPieces, piece = i % kPieces;
    const int row = first_row + r;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (row < valid_rows) value = *reinterpret_cast<const uint4*>(rows + row * row_stride + piece * 8);
    *reinterpret_cast<uint4*>(tile + r * D + piece * 8) = value;
  }
}

}  // namespace tessera::backend::cuda
