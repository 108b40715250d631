// Forward block kernel in the class of FlashAttention-2, on mma.sync m16n8k16 (bf16/fp16 inputs,
// fp32 accumulation). A CTA is one warp group (4 warps) on a tile of 128 query rows of one head;
// each warp owns 32 rows (two m16 slabs) and keeps everything about them in registers:
//   S = Q K^T of a key tile (64 keys at d = 64, 32 at d = 128: 2 x 8 or 2 x 4 m16n8 accumulators),
//   P = exp(S - max) rounded to 16 bits and fed back as the A operand of P V straight from the
//   S registers (the C layout of two m16n8 tiles is the A layout of one m16k16 tile),
//   O (2 x D/8 accumulators) and the online-softmax max and sum of its four rows per lane.
// Q fragments are read by ldmatrix from the shared Q tile at each k-step (holding them would
// cost D/4 more registers a lane); each K or V fragment read by ldmatrix serves both slabs,
// which halves shared-memory reads per FLOP against one slab a warp. K and V tiles stream
// through a ring of kStages shared buffers filled by cp.async: while a tile is computed
// the next kStages - 1 are in flight. K is read as the col-major B operand, V by ldmatrix.trans.
// Tiles whose first key comes after the CTA's last query are skipped under causal-like masks,
// decided 32 tiles at a time by the lanes together (mma_tiles.cuh); masks are evaluated (from
// token positions) only on tiles that need it. The block's (O, LSE)
// is merged into the accumulator by LSE weights.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#include "attention_kernels.hpp"
#include "element.cuh"
#include "kernel_launch.cuh"
#include "lse_merge.cuh"
#include "mask.cuh"
#include "mma_tiles.cuh"
#include "shared_memory.cuh"
#include "tensor_core_shapes.cuh"
#include "warp_mma.cuh"

namespace tessera::backend::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kSlabs = 2;                    // m16 row slabs per warp
constexpr int kWarpRows = 16 * kSlabs;       // 32
constexpr int kRows = kWarpRows * kWarps;    // query rows per CTA

// Keys per tile: 64 at d = 64; 32 at d = 128, where S of 64 keys would push the 2 x 128 floats
// of O and S past the 255 registers of a thread (ptxas spills).
template <int D>
__host__ __device__ constexpr int key_tile() {
  return D <= 64 ? 64 : 32;
}
// Buffers in the K/V ring, 3: 72 KiB of shared memory at d = 64, 85 KiB at d = 128, so that two
// CTAs fit on an SM either way.
constexpr int kStages = 3;

template <typename T, int D>
constexpr size_t shared_bytes() {
  return static_cast<size_t>(kRows + 2 * kStages * key_tile<D>()) * padded_row<D>() * sizeof(T);
}

// kMasked: args.mask.kind != 0. Built apart, so that the unmasked kernel holds none of the
// tile-skipping state: with it, d = 128 needed more than 255 registers and spilled.
template <typename T, int D, bool kMasked>
__global__ void __launch_bounds__(kWarps * 32) forward_mma_kernel(ForwardArgs args, const T* q, const T* kv) {
  constexpr int kCols = key_tile<D>(), kStride = padded_row<D>();
  T* q_tile = reinterpret_cast<T*>(dynamic_shared_memory());
  T* k_ring = q_tile + kRows * kStride;
  T* v_ring = k_ring + kStages * kCols * kStride;

  const BlockShape s = args.shape;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, quad = lane % 4;  // the fragment row (and row + 8) and column pair
  const int head = static_cast<int>(blockIdx.y);
  const int row0 = static_cast<int>(blockIdx.x) * kRows;
  const int kv_head = (s.first_head + head) / s.heads_per_kv - s.first_kv_head;
  const int64_t kv_stride = static_cast<int64_t>(s.kv_heads) * D;
  const T* keys = kv + static_cast<int64_t>(kv_head) * D;
  const T* values = kv + static_cast<int64_t>(s.kv_rows) * kv_stride + static_cast<int64_t>(kv_head) * D;

  // Query positions: the CTA's last (tile skipping, the same in every warp) and the warp's first
  // (whether a causal tile needs its mask). This lane's four rows (slab m, row g + 8 r) are
  // computed where used, and their positions read only on tiles that evaluate the mask: held
  // for the whole loop they took the registers that kept d = 128 from spilling.
  const TokenRange cta_queries = warp_token_range(args.q_tokens, row0, kRows, s.q_rows);
  const TokenRange warp_queries = warp_token_range(args.q_tokens, row0 + warp * kWarpRows, kWarpRows, s.q_rows);
  auto my_row = [&](int m, int r) { return row0 + warp * kWarpRows + m * 16 + group + 8 * r; };
  // exp(scale (s - max)) = 2^(s scale log2 e - max scale log2 e): one FFMA and one MUFU.EX2 a
  // score, the maxima kept on raw scores (scale > 0 keeps their order).
  const float scale_log2 = s.scale * 1.4426950408889634f;

  const int tiles = (s.kv_rows + kCols - 1) / kCols;
  // Under a mask, 32 key tiles at a time: computed where a key comes at or before the CTA's last
  // query (the same in every warp), masked where one comes after the warp's first query.
  auto load_window = [&](TileWindow& window, int first) {
    const TokenRange keys = lane_tile_range<kCols>(args.kv_tokens, first, s.kv_rows);
    window.first = first;
    window.computed = warp_bits(keys.lowest <= cta_queries.highest);
    window.needs_mask = warp_bits(keys.highest > warp_queries.lowest);
  };
  // The first tile at or after `tile` that is not skipped (tiles when none); every warp gets the
  // same. The fetch and the compute loop each keep their own window.
  TileWindow fetch_window, compute_window;
  auto next_tile = [&](TileWindow& window, int tile) {
    return kMasked ? next_computed_tile(window, tile, tiles, load_window) : tile;
  };
  auto issue_keys = [&](int tile, int stage) {
    issue_tile<T, D>(k_ring + stage * kCols * kStride, kCols, keys, kv_stride, tile * kCols, s.kv_rows);
    issue_tile<T, D>(v_ring + stage * kCols * kStride, kCols, values, kv_stride, tile * kCols, s.kv_rows);
  };

  // Q goes with the first tile's group; then kStages - 1 groups are in flight (some may be empty).
  issue_tile<T, D>(q_tile, kRows, q + static_cast<int64_t>(head) * D, static_cast<int64_t>(s.heads) * D, row0, s.q_rows);
  int fetch = next_tile(fetch_window, 0);
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (fetch < tiles) {
      issue_keys(fetch, stage);
      fetch = next_tile(fetch_window, fetch + 1);
    }
    cp_async_commit();
  }

  float o_acc[kSlabs][D / 8][4];
  float row_max[kSlabs][2], row_sum[kSlabs][2];  // row_sum: this lane's columns only
  TESSERA_UNROLL
  for (int m = 0; m < kSlabs; ++m) {
    TESSERA_UNROLL
    for (int n = 0; n < D / 8; ++n)
      TESSERA_UNROLL
      for (int i = 0; i < 4; ++i) o_acc[m][n][i] = 0.0f;
    TESSERA_UNROLL
    for (int r = 0; r < 2; ++r) row_max[m][r] = -CUDART_INF_F, row_sum[m][r] = 0.0f;
  }
  // This lane's ldmatrix row in the Q tile (A operand: matrices rows 0-7, 8-15 by columns 0-7, 8-15).
  const T* q_rows = q_tile + (warp * kWarpRows + lane % 8 + (lane / 8 % 2) * 8) * kStride + lane / 16 * 8;

  int tile = next_tile(compute_window, 0);
  for (int step = 0; tile < tiles; ++step) {
    cp_async_wait<kStages - 2>();  // this thread's copies of the tile (and Q) have landed
    __syncthreads();               // everyone's have; everyone is done with the buffer refilled next
    if (fetch < tiles) {
      issue_keys(fetch, (step + kStages - 1) % kStages);
      fetch = next_tile(fetch_window, fetch + 1);
    }
    cp_async_commit();
    const T* k_tile = k_ring + (step % kStages) * kCols * kStride;
    const T* v_tile = v_ring + (step % kStages) * kCols * kStride;
    const int col0 = tile * kCols;

    // S = Q K^T: n-tile j holds keys col0 + 8j .. 8j + 7; one ldmatrix.x4 gives two n-tiles' B.
    float s_acc[kSlabs][kCols / 8][4];
    TESSERA_UNROLL
    for (int m = 0; m < kSlabs; ++m)
      TESSERA_UNROLL
      for (int n = 0; n < kCols / 8; ++n)
        TESSERA_UNROLL
        for (int i = 0; i < 4; ++i) s_acc[m][n][i] = 0.0f;
    TESSERA_UNROLL
    for (int k = 0; k < D / 16; ++k) {
      uint32_t q_frag[kSlabs][4];
      TESSERA_UNROLL
      for (int m = 0; m < kSlabs; ++m) ldmatrix_x4<false>(q_frag[m], q_rows + m * 16 * kStride + k * 16);
      TESSERA_UNROLL
      for (int n = 0; n < kCols / 16; ++n) {
        uint32_t b[4];
        ldmatrix_x4<false>(b, k_tile + (n * 16 + lane / 16 * 8 + lane % 8) * kStride + k * 16 + (lane / 8 % 2) * 8);
        const uint32_t b_low[2] = {b[0], b[1]}, b_high[2] = {b[2], b[3]};
        TESSERA_UNROLL
        for (int m = 0; m < kSlabs; ++m) {
          mma_m16n8k16<T>(s_acc[m][2 * n], q_frag[m], b_low);
          mma_m16n8k16<T>(s_acc[m][2 * n + 1], q_frag[m], b_high);
        }
      }
    }

    // Mask where the tile needs it (keys past the block, or a mask cutting through it): the
    // score becomes -inf. (compute_window holds this tile: next_tile found it there.)
    const bool need_mask =
        col0 + kCols > s.kv_rows || (kMasked && (args.mask.kind != 1 || compute_window.tile_needs_mask(tile)));
    if (need_mask) {
      TESSERA_UNROLL
      for (int m = 0; m < kSlabs; ++m)
        TESSERA_UNROLL
        for (int r = 0; r < 2; ++r) {
          const long long query = my_row(m, r) < s.q_rows ? args.q_tokens[my_row(m, r)] : -1;
          TESSERA_UNROLL
          for (int n = 0; n < kCols / 8; ++n)
            TESSERA_UNROLL
            for (int c = 0; c < 2; ++c) {
              const int col = col0 + n * 8 + 2 * quad + c;
              const bool allowed = col < s.kv_rows && query >= 0 && mask_allows(args.mask, query, args.kv_tokens[col]);
              if (!allowed) s_acc[m][n][2 * r + c] = -CUDART_INF_F;
            }
        }
    }

    // Online softmax: a row's scores lie in the 4 lanes of a quad. A row with no allowed key
    // yet has max -inf; its exponent base is then taken as 0, so that its -inf scores give 0
    // (not -inf + inf) and its correction (O and the sum are 0 then) is 0.
    TESSERA_UNROLL
    for (int m = 0; m < kSlabs; ++m) {
      float correction[2];
      TESSERA_UNROLL
      for (int r = 0; r < 2; ++r) {
        float tile_max = -CUDART_INF_F;
        TESSERA_UNROLL
        for (int n = 0; n < kCols / 8; ++n) tile_max = fmaxf(tile_max, fmaxf(s_acc[m][n][2 * r], s_acc[m][n][2 * r + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(row_max[m][r], tile_max);
        const float base = new_max == -CUDART_INF_F ? 0.0f : new_max * scale_log2;
        correction[r] = exp2f(fmaf(row_max[m][r], scale_log2, -base));
        row_max[m][r] = new_max;
        float sum = 0.0f;
        TESSERA_UNROLL
        for (int n = 0; n < kCols / 8; ++n)
          TESSERA_UNROLL
          for (int c = 0; c < 2; ++c) {
            float& score = s_acc[m][n][2 * r + c];
            score = exp2f(fmaf(score, scale_log2, -base));
            sum += score;
          }
        row_sum[m][r] = row_sum[m][r] * correction[r] + sum;
      }
      TESSERA_UNROLL
      for (int n = 0; n < D / 8; ++n)
        TESSERA_UNROLL
        for (int i = 0; i < 4; ++i) o_acc[m][n][i] *= correction[i / 2];
    }

    // O += P V, P from the S registers: keys 16k .. 16k + 15 are n-tiles 2k and 2k + 1.
    TESSERA_UNROLL
    for (int k = 0; k < kCols / 16; ++k) {
      uint32_t p_frag[kSlabs][4];
      TESSERA_UNROLL
      for (int m = 0; m < kSlabs; ++m) {
        p_frag[m][0] = pack_pair<T>(s_acc[m][2 * k][0], s_acc[m][2 * k][1]);
        p_frag[m][1] = pack_pair<T>(s_acc[m][2 * k][2], s_acc[m][2 * k][3]);
        p_frag[m][2] = pack_pair<T>(s_acc[m][2 * k + 1][0], s_acc[m][2 * k + 1][1]);
        p_frag[m][3] = pack_pair<T>(s_acc[m][2 * k + 1][2], s_acc[m][2 * k + 1][3]);
      }
      TESSERA_UNROLL
      for (int n = 0; n < D / 16; ++n) {
        uint32_t b[4];
        ldmatrix_x4<true>(b, v_tile + (k * 16 + lane % 8 + (lane / 8 % 2) * 8) * kStride + n * 16 + lane / 16 * 8);
        const uint32_t b_low[2] = {b[0], b[1]}, b_high[2] = {b[2], b[3]};
        TESSERA_UNROLL
        for (int m = 0; m < kSlabs; ++m) {
          mma_m16n8k16<T>(o_acc[m][2 * n], p_frag[m], b_low);
          mma_m16n8k16<T>(o_acc[m][2 * n + 1], p_frag[m], b_high);
        }
      }
    }
    tile = next_tile(compute_window, tile + 1);
  }
  cp_async_wait<0>();

  // Merge the block's (O, LSE) of this lane's rows into the accumulator.
  const int64_t lse_base = static_cast<int64_t>(s.q_rows) * s.heads * D;
  float old_lse[kSlabs][2];
  bool has_keys[kSlabs][2];
  TESSERA_UNROLL
  for (int m = 0; m < kSlabs; ++m)
    TESSERA_UNROLL
    for (int r = 0; r < 2; ++r) {
      row_sum[m][r] += __shfl_xor_sync(0xffffffffu, row_sum[m][r], 1);
      row_sum[m][r] += __shfl_xor_sync(0xffffffffu, row_sum[m][r], 2);
      has_keys[m][r] = my_row(m, r) < s.q_rows && row_sum[m][r] > 0.0f;
      old_lse[m][r] = has_keys[m][r] ? args.out[lse_base + static_cast<int64_t>(my_row(m, r)) * s.heads + head] : 0.0f;
    }
  __syncwarp();  // the quad has read the LSE before its first lane rewrites it
  TESSERA_UNROLL
  for (int m = 0; m < kSlabs; ++m)
    TESSERA_UNROLL
    for (int r = 0; r < 2; ++r) {
      if (!has_keys[m][r]) continue;
      const LseMerge merge = merge_lse(old_lse[m][r], row_max[m][r] * s.scale + logf(row_sum[m][r]));
      const float weight_b = merge.weight_b / row_sum[m][r];  // O is not yet normalised
      float* out_row = args.out + (static_cast<int64_t>(my_row(m, r)) * s.heads + head) * D;
      TESSERA_UNROLL
      for (int n = 0; n < D / 8; ++n)
        TESSERA_UNROLL
        for (int c = 0; c < 2; ++c) {
          float& slot = out_row[n * 8 + 2 * quad + c];
          slot = merge.weight_a * slot + weight_b * o_acc[m][n][2 * r + c];
        }
      if (quad == 0) args.out[lse_base + static_cast<int64_t>(my_row(m, r)) * s.heads + head] = merge.lse;
    }
}

template <typename T, int D, bool kMasked>
cudaError_t launch(const ForwardArgs& args, cudaStream_t stream) {
  constexpr size_t bytes = shared_bytes<T, D>();
  const cudaError_t status = allow_shared_bytes(forward_mma_kernel<T, D, kMasked>, bytes);
  if (status != cudaSuccess) return status;
  const dim3 grid(static_cast<unsigned>((args.shape.q_rows + kRows - 1) / kRows), static_cast<unsigned>(args.shape.heads));
  return launch_kernel(forward_mma_kernel<T, D, kMasked>, grid, dim3(kWarps * 32), bytes, stream, args,
                       static_cast<const T*>(args.q), static_cast<const T*>(args.kv));
}

}  // namespace

bool launch_forward_block_mma(const ForwardArgs& args, cudaStream_t stream, cudaError_t& status) {
  return launch_on_mma(args.shape, args.element, status, [&](auto element, auto head_dim) {
    using T = decltype(element);
    constexpr int D = decltype(head_dim)::value;
    return args.mask.kind != 0 ? launch<T, D, true>(args, stream) : launch<T, D, false>(args, stream);
  });
}

}  // namespace tessera::backend::cuda
