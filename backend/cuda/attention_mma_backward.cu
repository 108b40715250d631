// Backward block kernel in the class of FlashAttention-2, on mma.sync m16n8k16 (bf16/fp16
// inputs, fp32 accumulation). A CTA is one warp group (4 warps) on 64 keys of one query head;
// each warp owns 16 keys, and dK and dV of its keys (D/8 m16n8 accumulators each) stay in
// registers for the whole walk over the block's query tiles of 32 rows. Per query tile:
//   S^T = K Q^T and dP^T = V dO^T     (16 keys x 32 queries a warp, in registers)
//   P^T = exp(scale S^T - LSE), dS^T = P^T (dP^T - delta) scale      (in the same registers)
//   dV += P^T dO, dK += dS^T Q        (P^T and dS^T fed back as A operands from registers)
//   dQ += dS K                        (dS^T through shared memory, read by ldmatrix.trans; each
//                                      warp 16 queries x D/2, added atomically in fp32)
// K and V come by ldmatrix from shared tiles loaded once; Q and dO tiles (and the rows' LSE,
// delta and positions) stream through a ring of kStages buffers filled by cp.async. P and dS
// are rounded to 16 bits for their products, as FlashAttention does. Query tiles that end
// before the CTA's first key are skipped under causal-like masks; dK and dV are added
// atomically at the end (the query heads of one KV head, GQA, add into the same rows).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#include "attention_kernels.hpp"
#include "element.cuh"
#include "kernel_launch.cuh"
#include "mask.cuh"
#include "mma_tiles.cuh"
#include "shared_memory.cuh"
#include "tensor_core_shapes.cuh"
#include "warp_mma.cuh"

namespace tessera::backend::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kKeys = 16 * kWarps;  // keys per CTA
constexpr int kQueries = 32;        // query rows per step of the walk
constexpr int kDsRow = kQueries + 8;  // dS^T rows in shared memory, padded as the tiles are

// Buffers in the Q/dO ring: three at d = 64 (50 KB of shared memory), two at d = 128 (73 KB).
template <int D>
__host__ __device__ constexpr int stages() {
  return D <= 64 ? 3 : 2;
}

template <typename T, int D>
constexpr size_t shared_bytes() {
  return (static_cast<size_t>(2 * kKeys + 2 * stages<D>() * kQueries) * padded_row<D>() + kKeys * kDsRow) * sizeof(T);
}

template <typename T, int D>
__global__ void __launch_bounds__(kWarps * 32) backward_mma_kernel(BackwardArgs args, const T* q, const T* kv, const T* d_out) {
  constexpr int kStages = stages<D>(), kStride = padded_row<D>();
  __shared__ float stage_lse[kStages][kQueries], stage_delta[kStages][kQueries];
  __shared__ long long stage_query[kStages][kQueries];
  T* k_tile = reinterpret_cast<T*>(dynamic_shared_memory());
  T* v_tile = k_tile + kKeys * kStride;
  T* q_ring = v_tile + kKeys * kStride;
  T* do_ring = q_ring + kStages * kQueries * kStride;
  T* ds_t = do_ring + kStages * kQueries * kStride;  // dS^T [key][query]

  const BlockShape s = args.shape;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, quad = lane % 4;
  const int head = static_cast<int>(blockIdx.y);
  const int col0 = static_cast<int>(blockIdx.x) * kKeys;
  const int kv_head = (s.first_head + head) / s.heads_per_kv - s.first_kv_head;
  const int64_t kv_stride = static_cast<int64_t>(s.kv_heads) * D;
  const int64_t q_stride = static_cast<int64_t>(s.heads) * D;
  const bool masked = args.mask.kind != 0;
  const int64_t row_heads = static_cast<int64_t>(s.q_rows) * s.heads;

  // Key positions: the CTA's first (query tiles before it are skipped), the warp's last (whether
  // a causal tile needs its mask), and this lane's two keys.
  const TokenRange cta_keys = warp_token_range(args.kv_tokens, col0, kKeys, s.kv_rows);
  const TokenRange warp_keys = warp_token_range(args.kv_tokens, col0 + warp * 16, 16, s.kv_rows);
  int my_col[2];
  long long my_key[2];
  TESSERA_UNROLL
  for (int r = 0; r < 2; ++r) {
    my_col[r] = col0 + warp * 16 + group + 8 * r;
    my_key[r] = my_col[r] < s.kv_rows ? args.kv_tokens[my_col[r]] : -1;
  }

  const int tiles = (s.q_rows + kQueries - 1) / kQueries;
  // Under a mask, 32 query tiles at a time (mma_tiles.cuh): computed where a query comes at or
  // after the CTA's first key (the same in every warp), masked where one comes before the warp's
  // last key. The fetch and the compute loop each keep their own window.
  auto load_window = [&](TileWindow& window, int first) {
    const TokenRange queries = lane_tile_range<kQueries>(args.q_tokens, first, s.q_rows);
    window.first = first;
    window.computed = warp_bits(queries.highest >= cta_keys.lowest);
    window.needs_mask = warp_bits(warp_keys.highest > queries.lowest);
  };
  TileWindow fetch_window, compute_window;
  auto next_tile = [&](TileWindow& window, int tile) {
    return masked ? next_computed_tile(window, tile, tiles, load_window) : tile;
  };
  auto issue_queries = [&](int tile, int stage) {
    const int row0 = tile * kQueries;
    issue_tile<T, D>(q_ring + stage * kQueries * kStride, kQueries, q + static_cast<int64_t>(head) * D, q_stride, row0, s.q_rows);
    issue_tile<T, D>(do_ring + stage * kQueries * kStride, kQueries, d_out + static_cast<int64_t>(head) * D, q_stride, row0,
                     s.q_rows);
    if (threadIdx.x < kQueries) {  // plain loads: seen by all after the barrier that precedes their use
      const int row = row0 + static_cast<int>(threadIdx.x);
      const bool valid = row < s.q_rows;
      const int64_t row_head = static_cast<int64_t>(row) * s.heads + head;
      stage_lse[stage][threadIdx.x] = valid ? args.stats[row_head] : 0.0f;
      stage_delta[stage][threadIdx.x] = valid ? args.stats[row_heads + row_head] : 0.0f;
      stage_query[stage][threadIdx.x] = valid ? args.q_tokens[row] : -1;
    }
  };

  // K and V go with the first query tile's group; then kStages - 1 groups are in flight.
  issue_tile<T, D>(k_tile, kKeys, kv + static_cast<int64_t>(kv_head) * D, kv_stride, col0, s.kv_rows);
  issue_tile<T, D>(v_tile, kKeys, kv + static_cast<int64_t>(s.kv_rows) * kv_stride + static_cast<int64_t>(kv_head) * D, kv_stride,
                   col0, s.kv_rows);
  int fetch = next_tile(fetch_window, 0);
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (fetch < tiles) {
      issue_queries(fetch, stage);
      fetch = next_tile(fetch_window, fetch + 1);
    }
    cp_async_commit();
  }

  float d_k[D / 8][4], d_v[D / 8][4];
  TESSERA_UNROLL
  for (int n = 0; n < D / 8; ++n)
    TESSERA_UNROLL
    for (int i = 0; i < 4; ++i) d_k[n][i] = d_v[n][i] = 0.0f;

  int tile = next_tile(compute_window, 0);
  for (int step = 0; tile < tiles; ++step) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // the tile has landed for everyone; everyone is done with the refilled buffer and dS^T
    if (fetch < tiles) {
      issue_queries(fetch, (step + kStages - 1) % kStages);
      fetch = next_tile(fetch_window, fetch + 1);
    }
    cp_async_commit();
    const int stage = step % kStages;
    const T* q_tile = q_ring + stage * kQueries * kStride;
    const T* do_tile = do_ring + stage * kQueries * kStride;
    const int row0 = tile * kQueries;

    // S^T = K Q^T and dP^T = V dO^T; n-tile j holds queries 8j .. 8j + 7 of the tile.
    float s_t[kQueries / 8][4], dp_t[kQueries / 8][4];
    TESSERA_UNROLL
    for (int n = 0; n < kQueries / 8; ++n)
      TESSERA_UNROLL
      for (int i = 0; i < 4; ++i) s_t[n][i] = dp_t[n][i] = 0.0f;
    TESSERA_UNROLL
    for (int k = 0; k < D / 16; ++k) {
      uint32_t k_frag[4], v_frag[4];
      const int a_offset = (warp * 16 + lane % 8 + (lane / 8 % 2) * 8) * kStride + k * 16 + lane / 16 * 8;
      ldmatrix_x4<false>(k_frag, k_tile + a_offset);
      ldmatrix_x4<false>(v_frag, v_tile + a_offset);
      TESSERA_UNROLL
      for (int n = 0; n < kQueries / 16; ++n) {
        const int b_offset = (n * 16 + lane / 16 * 8 + lane % 8) * kStride + k * 16 + (lane / 8 % 2) * 8;
        uint32_t b[4];
        ldmatrix_x4<false>(b, q_tile + b_offset);
        const uint32_t q_low[2] = {b[0], b[1]}, q_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(s_t[2 * n], k_frag, q_low);
        mma_m16n8k16<T>(s_t[2 * n + 1], k_frag, q_high);
        ldmatrix_x4<false>(b, do_tile + b_offset);
        const uint32_t do_low[2] = {b[0], b[1]}, do_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(dp_t[2 * n], v_frag, do_low);
        mma_m16n8k16<T>(dp_t[2 * n + 1], v_frag, do_high);
      }
    }

    // P^T and dS^T in place; masked pairs (and rows or keys past the block) give zero.
    // (compute_window holds this tile: next_tile found it there.)
    const bool need_mask = row0 + kQueries > s.q_rows || col0 + kKeys > s.kv_rows ||
                           (masked && (args.mask.kind != 1 || compute_window.tile_needs_mask(tile)));
    TESSERA_UNROLL
    for (int n = 0; n < kQueries / 8; ++n)
      TESSERA_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int c = n * 8 + 2 * quad + i % 2;
        bool allowed = true;
        if (need_mask) {
          const long long query = stage_query[stage][c], key = my_key[i / 2];
          allowed = query >= 0 && key >= 0 && mask_allows(args.mask, query, key);
        }
        const float p = allowed ? __expf(s_t[n][i] * s.scale - stage_lse[stage][c]) : 0.0f;
        s_t[n][i] = p;
        dp_t[n][i] = p * (dp_t[n][i] - stage_delta[stage][c]) * s.scale;
      }

    // dV += P^T dO and dK += dS^T Q: queries 16k .. 16k + 15 are n-tiles 2k and 2k + 1.
    TESSERA_UNROLL
    for (int k = 0; k < kQueries / 16; ++k) {
      const uint32_t p_frag[4] = {pack_pair<T>(s_t[2 * k][0], s_t[2 * k][1]), pack_pair<T>(s_t[2 * k][2], s_t[2 * k][3]),
                                  pack_pair<T>(s_t[2 * k + 1][0], s_t[2 * k + 1][1]),
                                  pack_pair<T>(s_t[2 * k + 1][2], s_t[2 * k + 1][3])};
      const uint32_t ds_frag[4] = {pack_pair<T>(dp_t[2 * k][0], dp_t[2 * k][1]), pack_pair<T>(dp_t[2 * k][2], dp_t[2 * k][3]),
                                   pack_pair<T>(dp_t[2 * k + 1][0], dp_t[2 * k + 1][1]),
                                   pack_pair<T>(dp_t[2 * k + 1][2], dp_t[2 * k + 1][3])};
      TESSERA_UNROLL
      for (int n = 0; n < D / 16; ++n) {
        const int b_offset = (k * 16 + lane % 8 + (lane / 8 % 2) * 8) * kStride + n * 16 + lane / 16 * 8;
        uint32_t b[4];
        ldmatrix_x4<true>(b, do_tile + b_offset);
        const uint32_t do_low[2] = {b[0], b[1]}, do_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(d_v[2 * n], p_frag, do_low);
        mma_m16n8k16<T>(d_v[2 * n + 1], p_frag, do_high);
        ldmatrix_x4<true>(b, q_tile + b_offset);
        const uint32_t q_low[2] = {b[0], b[1]}, q_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(d_k[2 * n], ds_frag, q_low);
        mma_m16n8k16<T>(d_k[2 * n + 1], ds_frag, q_high);
      }
      // The same registers, rounded the same way, are what dQ reads back.
      TESSERA_UNROLL
      for (int half = 0; half < 2; ++half)
        TESSERA_UNROLL
        for (int r = 0; r < 2; ++r) {
          const int key_row = warp * 16 + group + 8 * r, query_col = k * 16 + half * 8 + 2 * quad;
          *reinterpret_cast<uint32_t*>(ds_t + key_row * kDsRow + query_col) = ds_frag[2 * half + r];
        }
    }
    __syncthreads();  // every warp's dS^T is in shared memory

    // dQ (32 queries x D) = dS K: warp w takes queries 16 (w % 2) .. + 15 and dims (D/2) (w / 2) .. + D/2 - 1.
    const int q_half = warp % 2 * 16, d_half = warp / 2 * (D / 2);
    float d_q[D / 16][4];
    TESSERA_UNROLL
    for (int n = 0; n < D / 16; ++n)
      TESSERA_UNROLL
      for (int i = 0; i < 4; ++i) d_q[n][i] = 0.0f;
    TESSERA_UNROLL
    for (int k = 0; k < kKeys / 16; ++k) {
      uint32_t a[4];
      ldmatrix_x4<true>(a, ds_t + (k * 16 + lane / 16 * 8 + lane % 8) * kDsRow + q_half + (lane / 8 % 2) * 8);
      TESSERA_UNROLL
      for (int n = 0; n < D / 32; ++n) {
        uint32_t b[4];
        ldmatrix_x4<true>(b, k_tile + (k * 16 + lane % 8 + (lane / 8 % 2) * 8) * kStride + d_half + n * 16 + lane / 16 * 8);
        const uint32_t k_low[2] = {b[0], b[1]}, k_high[2] = {b[2], b[3]};
        mma_m16n8k16<T>(d_q[2 * n], a, k_low);
        mma_m16n8k16<T>(d_q[2 * n + 1], a, k_high);
      }
    }
    TESSERA_UNROLL
    for (int n = 0; n < D / 16; ++n)
      TESSERA_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int row = row0 + q_half + group + 8 * (i / 2);
        if (row < s.q_rows)
          atomicAdd(args.d_q + (static_cast<int64_t>(row) * s.heads + head) * D + d_half + n * 8 + 2 * quad + i % 2, d_q[n][i]);
      }
    tile = next_tile(compute_window, tile + 1);
  }
  cp_async_wait<0>();

  // The walk is done: add the warp's dK and dV rows into the partials.
  float* d_keys = args.d_kv;
  float* d_values = args.d_kv + static_cast<int64_t>(s.kv_rows) * kv_stride;
  TESSERA_UNROLL
  for (int n = 0; n < D / 8; ++n)
    TESSERA_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int col = my_col[i / 2];
      if (col >= s.kv_rows) continue;
      const int64_t at = static_cast<int64_t>(col) * kv_stride + static_cast<int64_t>(kv_head) * D + n * 8 + 2 * quad + i % 2;
      atomicAdd(d_keys + at, d_k[n][i]);
      atomicAdd(d_values + at, d_v[n][i]);
    }
}

template <typename T, int D>
cudaError_t launch(const BackwardArgs& args, cudaStream_t stream) {
  constexpr size_t bytes = shared_bytes<T, D>();
  const cudaError_t status = allow_shared_bytes(backward_mma_kernel<T, D>, bytes);
  if (status != cudaSuccess) return status;
  const dim3 grid(static_cast<unsigned>((args.shape.kv_rows + kKeys - 1) / kKeys), static_cast<unsigned>(args.shape.heads));
  return launch_kernel(backward_mma_kernel<T, D>, grid, dim3(kWarps * 32), bytes, stream, args, static_cast<const T*>(args.q),
                       static_cast<const T*>(args.kv), static_cast<const T*>(args.d_out));
}

}  // namespace

bool launch_backward_block_mma(const BackwardArgs& args, cudaStream_t stream, cudaError_t& status) {
  return launch_on_mma(args.shape, args.element, status, [&](auto element, auto head_dim) {
    return launch<decltype(element), decltype(head_dim)::value>(args, stream);
  });
}

}  // namespace tessera::backend::cuda
