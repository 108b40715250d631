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

// The token range of tile `first_tile + lane` (tiles of kTileRows rows, rows at or past `valid`
// left out; empty past the end), each lane its own tile: the loads of 32 tiles are in flight
// together and no shuffle is needed. Deciding tile by tile with warp_token_range put a global
// load and ten shuffles on the warp's critical path per tile, and a causal CTA crossed every
// tile after its diagonal that way, twice: on an H200 the causal forward (half the work) took
// 0.94 of the full one's time.
template <int kTileRows>
__device__ inline TokenRange lane_tile_range(const int64_t* tokens, int first_tile, int valid) {
  TokenRange range;
  const int first_row = (first_tile + static_cast<int>(threadIdx.x % 32)) * kTileRows;
  for (int r = 0; r < kTileRows; ++r) {  // not unrolled whole: the kernels have no registers to spare
    if (first_row + r >= valid) break;
    const long long token = tokens[first_row + r];
    range.lowest = token < range.lowest ? token : range.lowest;
    range.highest = token > range.highest ? token : range.highest;
  }
  return range;
}

// Bit i set where lane i's `bit` is: the same word in every lane of the warp (all 32 call it). A
// ballot made of shuffles, which the CPU emulation runs as it runs the kernels' other shuffles.
__device__ inline unsigned warp_bits(bool bit) {
  unsigned bits = bit ? 1u << (threadIdx.x % 32) : 0u;
  for (int offset = 16; offset > 0; offset /= 2) bits |= __shfl_xor_sync(0xffffffffu, bits, offset);
  return bits;
}

// The index of the lowest set bit of a non-zero word.
__device__ inline int lowest_set_bit(unsigned bits) {
#ifdef TESSERA_CUDA_EMULATION
  int index = 0;
  while (!(bits & 1u)) bits >>= 1, ++index;
  return index;
#else
  return __ffs(static_cast<int>(bits)) - 1;
#endif
}

// 32 consecutive tiles of a kernel's loop, decided at once (lane_tile_range, warp_bits): which
// are computed, and which of those need their mask evaluated.
struct TileWindow {
  int first = -1;          // the window's first tile (a multiple of 32); -1: none loaded
  unsigned computed = 0;   // bit i: tile first + i has work for this CTA
  unsigned needs_mask = 0; // bit i: the mask cuts through tile first + i for this warp
  __device__ bool tile_needs_mask(int tile) const { return (needs_mask >> (tile - first)) & 1u; }
};

// The first tile at or after `tile` that `window` (reloaded by load(window, first) as the tiles
// cross into the next 32) marks computed; `tiles` when none is.
template <typename Load>
__device__ inline int next_computed_tile(TileWindow& window, int tile, int tiles, Load&& load) {
  while (tile < tiles) {
    const int first = tile / 32 * 32;
    if (window.first != first) load(window, first);
    const unsigned rest = window.computed >> (tile - first);
    if (rest != 0) return tile + lowest_set_bit(rest);
    tile = first + 32;
  }
  return tiles;
}

}  // namespace tessera::backend::cuda
