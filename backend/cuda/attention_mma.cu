// Forward block kernel in the class of FlashAttention-2, on mma.sync m16n8k16 (bf16/fp16 inputs,
// fp32 accumulation). A CTA is one warp group (4 warps) on a tile of 64 query rows of one head;
// each warp owns 16 rows and keeps everything about them in registers:
//   Q fragments (D/16 x 4 registers, loaded once by ldmatrix),
//   S = Q K^T of a 64-key tile (8 m16n8 accumulators, 32 floats),
//   P = exp(S - max) rounded to 16 bits and fed back as the A operand of P V straight from the
//   S registers (the C layout of two m16n8 tiles is the A layout of one m16k16 tile),
//   O (D/8 accumulators) and the online-softmax max and sum of its two rows per lane.
// K and V tiles (64 x D) stream through a ring of kStages shared buffers filled by cp.async:
// while a tile is computed the next kStages - 1 are in flight. K is read by ldmatrix as the
// col-major B operand, V by ldmatrix.trans. Tiles whose first key comes after the CTA's last
// query are skipped under causal-like masks; masks are evaluated (from token positions) only on
// tiles that need it. The block's (O, LSE) is merged into the accumulator by LSE weights.
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
constexpr int kRows = 16 * kWarps;  // query rows per CTA
constexpr int kCols = 64;           // keys per tile

// Buffers in the K/V ring: three at d = 64 (64 KB of shared memory), two at d = 128 (85 KB),
// so that two CTAs fit on an SM either way.
template <int D>
__host__ __device__ constexpr int stages() {
  return D <= 64 ? 3 : 2;
}

template <typename T, int D>
constexpr size_t shared_bytes() {
  return static_cast<size_t>(kRows + 2 * stages<D>() * kCols) * padded_row<D>() * sizeof(T);
}

template <typename T, int D>
__global__ void __launch_bounds__(kWarps * 32) forward_mma_kernel(ForwardArgs args, const T* q, const T* kv) {
  constexpr int kStages = stages<D>(), kStride = padded_row<D>();
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
  const bool masked = args.mask.kind != 0;

  // Query positions: the CTA's last (tile skipping, the same in every warp), the warp's first
  // (whether a causal tile needs its mask), and this lane's two rows.
  const TokenRange cta_queries = warp_token_range(args.q_tokens, row0, kRows, s.q_rows);
  const TokenRange warp_queries = warp_token_range(args.q_tokens, row0 + warp * 16, 16, s.q_rows);
  int my_row[2];
  long long my_query[2];
  for (int r = 0; r < 2; ++r) {
    my_row[r] = row0 + warp * 16 + group + 8 * r;
    my_query[r] = my_row[r] < s.q_rows ? args.q_tokens[my_row[r]] : -1;
  }

  const int tiles = (s.kv_rows + kCols - 1) / kCols;
  // The first tile at or after `tile` that is not skipped (tiles when none); every warp gets the same.
  auto next_tile = [&](int tile) {
    for (; tile < tiles && masked; ++tile)
      if (warp_token_range(args.kv_tokens, tile * kCols, kCols, s.kv_rows).lowest <= cta_queries.highest) break;
    return tile;
  };
  auto issue_keys = [&](int tile, int stage) {
    issue_tile<T, D>(k_ring + stage * kCols * kStride, kCols, keys, kv_stride, tile * kCols, s.kv_rows);
    issue_tile<T, D>(v_ring + stage * kCols * kStride, kCols, values, kv_stride, tile * kCols, s.kv_rows);
  };

  // Q goes with the first tile's group; then kStages - 1 groups are in flight (some may be empty).
  issue_tile<T, D>(q_tile, kRows, q + static_cast<int64_t>(head) * D, static_cast<int64_t>(s.heads) * D, row0, s.q_rows);
  int fetch = next_tile(0);
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (fetch < tiles) {
      issue_keys(fetch, stage);
      fetch = next_tile(fetch + 1);
    }
    cp_async_commit();
  }

  uint32_t q_frag[D / 16][4];
  float o_acc[D / 8][4];
  for (int n = 0; n < D / 8; ++n)
    for (int i = 0; i < 4; ++i) o_acc[n][i] = 0.0f;
  float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F}, row_sum[2] = {0.0f, 0.0f};  // row_sum: this lane's columns

  int tile = next_tile(0);
  for (int step = 0; tile < tiles; ++step) {
    cp_async_wait<kStages - 2>();  // this thread's copies of the tile (and Q) have landed
    __syncthreads();               // everyone's have; everyone is done with the buffer refilled next
    if (fetch < tiles) {
      issue_keys(fetch, (step + kStages - 1) % kStages);
      fetch = next_tile(fetch + 1);
    }
    cp_async_commit();
    if (step == 0)
      for (int k = 0; k < D / 16; ++k)
        ldmatrix_x4<false>(q_frag[k], q_tile + (warp * 16 + lane % 8 + (lane / 8 % 2) * 8) * kStride + k * 16 + lane / 16 * 8);
    const T* k_tile = k_ring + (step % kStages) * kCols * kStride;
    const T* v_tile = v_ring + (step % kStages) * kCols * kStride;
    const int col0 = tile * kCols;

    // S = Q K^T: n-tile j holds keys col0 + 8j .. 8j + 7; one ldmatrix.x4 gives two n-tiles' B.
    float s_acc[kCols / 8][4];
    for (int n = 0; n < kCols / 8; ++n)
      for (int i = 0; i < 4; ++i) s_acc[n][i] = 0.0f;
    for (int k = 0; k < D / 16; ++k)
      for (int n = 0; n < kCols / 16; ++n) {
        uint32_t b[4];
        ldmatrix_x4<false>(b, k_tile + (n * 16 + lane / 16 * 8 + lane % 8) * kStride + k * 16 + (lane / 8 % 2) * 8);
        const uint32_t b_low[2] = {b[0], b[1]}, b_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(s_acc[2 * n], q_frag[k], b_low);
        mma_m16n8k16<T>(s_acc[2 * n + 1], q_frag[k], b_high);
      }

    // Scale, mask where the tile needs it (keys past the block, or a mask cutting through it).
    bool need_mask = col0 + kCols > s.kv_rows;
    if (masked) {
      const TokenRange tile_keys = warp_token_range(args.kv_tokens, col0, kCols, s.kv_rows);
      need_mask = need_mask || args.mask.kind != 1 || tile_keys.highest > warp_queries.lowest;
    }
    for (int n = 0; n < kCols / 8; ++n)
      for (int i = 0; i < 4; ++i) {
        float score = s_acc[n][i] * s.scale;
        if (need_mask) {
          const int col = col0 + n * 8 + 2 * quad + i % 2;
          const long long query = my_query[i / 2];
          const bool allowed = col < s.kv_rows && query >= 0 && mask_allows(args.mask, query, args.kv_tokens[col]);
          if (!allowed) score = -CUDART_INF_F;
        }
        s_acc[n][i] = score;
      }

    // Online softmax: a row's 64 scores lie in the 4 lanes of a quad.
    float correction[2];
    for (int r = 0; r < 2; ++r) {
      float tile_max = -CUDART_INF_F;
      for (int n = 0; n < kCols / 8; ++n) tile_max = fmaxf(tile_max, fmaxf(s_acc[n][2 * r], s_acc[n][2 * r + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float new_max = fmaxf(row_max[r], tile_max);
      correction[r] = row_max[r] == -CUDART_INF_F ? 0.0f : __expf(row_max[r] - new_max);
      row_max[r] = new_max;
      float sum = 0.0f;
      for (int n = 0; n < kCols / 8; ++n)
        for (int c = 0; c < 2; ++c) {
          float& score = s_acc[n][2 * r + c];
          score = score == -CUDART_INF_F ? 0.0f : __expf(score - new_max);
          sum += score;
        }
      row_sum[r] = row_sum[r] * correction[r] + sum;
    }
    for (int n = 0; n < D / 8; ++n)
      for (int i = 0; i < 4; ++i) o_acc[n][i] *= correction[i / 2];

    // O += P V, P from the S registers: keys 16k .. 16k + 15 are n-tiles 2k and 2k + 1.
    for (int k = 0; k < kCols / 16; ++k) {
      const uint32_t a[4] = {pack_pair<T>(s_acc[2 * k][0], s_acc[2 * k][1]), pack_pair<T>(s_acc[2 * k][2], s_acc[2 * k][3]),
                             pack_pair<T>(s_acc[2 * k + 1][0], s_acc[2 * k + 1][1]),
                             pack_pair<T>(s_acc[2 * k + 1][2], s_acc[2 * k + 1][3])};
      for (int n = 0; n < D / 16; ++n) {
        uint32_t b[4];
        ldmatrix_x4<true>(b, v_tile + (k * 16 + lane % 8 + (lane / 8 % 2) * 8) * kStride + n * 16 + lane / 16 * 8);
        const uint32_t b_low[2] = {b[0], b[1]}, b_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(o_acc[2 * n], a, b_low);
        mma_m16n8k16<T>(o_acc[2 * n + 1], a, b_high);
      }
    }
    tile = next_tile(tile + 1);
  }
  cp_async_wait<0>();

  // Merge the block's (O, LSE) of this lane's rows into the accumulator.
  float old_lse[2];
  bool has_keys[2];
  for (int r = 0; r < 2; ++r) {
    row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
    row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
    has_keys[r] = my_row[r] < s.q_rows && row_sum[r] > 0.0f;
    old_lse[r] = has_keys[r] ? args.out[static_cast<int64_t>(s.q_rows) * s.heads * D + static_cast<int64_t>(my_row[r]) * s.heads + head] : 0.0f;
  }
  __syncwarp();  // the quad has read the LSE before its first lane rewrites it
  for (int r = 0; r < 2; ++r) {
    if (!has_keys[r]) continue;
    const LseMerge merge = merge_lse(old_lse[r], row_max[r] + logf(row_sum[r]));
    const float weight_b = merge.weight_b / row_sum[r];  // O is not yet normalised
    float* out_row = args.out + (static_cast<int64_t>(my_row[r]) * s.heads + head) * D;
    for (int n = 0; n < D / 8; ++n)
      for (int c = 0; c < 2; ++c) {
        float& slot = out_row[n * 8 + 2 * quad + c];
        slot = merge.weight_a * slot + weight_b * o_acc[n][2 * r + c];
      }
    if (quad == 0) args.out[static_cast<int64_t>(s.q_rows) * s.heads * D + static_cast<int64_t>(my_row[r]) * s.heads + head] = merge.lse;
  }
}

template <typename T, int D>
cudaError_t launch(const ForwardArgs& args, cudaStream_t stream) {
  constexpr size_t bytes = shared_bytes<T, D>();
  const cudaError_t status = allow_shared_bytes(forward_mma_kernel<T, D>, bytes);
  if (status != cudaSuccess) return status;
  const dim3 grid(static_cast<unsigned>((args.shape.q_rows + kRows - 1) / kRows), static_cast<unsigned>(args.shape.heads));
  return launch_kernel(forward_mma_kernel<T, D>, grid, dim3(kWarps * 32), bytes, stream, args, static_cast<const T*>(args.q),
                       static_cast<const T*>(args.kv));
}

}  // namespace

bool launch_forward_block_mma(const ForwardArgs& args, cudaStream_t stream, cudaError_t& status) {
  return launch_on_mma(args.shape, args.element, status, [&](auto element, auto head_dim) {
    return launch<decltype(element), decltype(head_dim)::value>(args, stream);
  });
}

}  // namespace tessera::backend::cuda
