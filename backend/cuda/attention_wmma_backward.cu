// Tensor-core backward block kernel (FlashAttention-2 style, WMMA bf16/fp16 with fp32
// accumulation). A CTA of 4 warps takes 64 keys of one query head and walks the block's query
// rows in tiles of 64; each warp owns 16 keys. Per query tile, on tensor cores:
//   S^T = K Q^T and dP^T = V dO^T              (the warp's 16 keys x 64 queries)
//   P^T = exp(scale S^T - LSE), dS^T = P^T (dP^T - delta) scale   (fp32, masks from tokens)
//   dV += P^T dO, dK += dS^T Q                 (held in registers for the whole walk)
//   dQ += dS K                                 (each warp 16 queries over all 64 keys, added
//                                               atomically: other CTAs add to the same rows)
// P and dS are rounded to 16 bits before their products, as FlashAttention does. dK and dV
// are added atomically at the end because the query heads of one KV head (GQA) and other
// blocks of the schedule add into the same partials. Query tiles that lie entirely before the
// CTA's first key are skipped under causal-like masks (tokens within a chunk increase).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "attention_kernels.hpp"
#include "element.cuh"
#include "kernel_launch.cuh"
#include "mask.cuh"
#include "shared_memory.cuh"
#include "tensor_core_shapes.cuh"
#include "tile_load.cuh"

namespace tessera::backend::cuda {

namespace {

constexpr int kKeys = 64;     // keys per CTA, 16 per warp
constexpr int kQueries = 64;  // query rows per step of the walk
constexpr int kWarps = 4;

// Each warp's fp32 scratch: S^T and dP^T (16 x 64 each), later reused to stage 16 x D results.
template <int D>
__host__ __device__ constexpr int scratch_floats() {
  return 2 * 16 * kQueries > 16 * D ? 2 * 16 * kQueries : 16 * D;
}

template <typename T, int D>
constexpr size_t shared_bytes() {
  // K, V, Q, dO tiles; P^T and dS^T of all 64 keys; the warps' scratch.
  return (2 * kKeys * D + 2 * kQueries * D + 2 * kKeys * kQueries) * sizeof(T) + kWarps * scratch_floats<D>() * sizeof(float);
}

template <typename T, int D>
__global__ void __launch_bounds__(kWarps * 32) backward_wmma_kernel(BackwardArgs args, const T* q, const T* kv, const T* d_out) {
  using namespace nvcuda;
  using Accumulator = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
  unsigned char* shared = dynamic_shared_memory();
  __shared__ float lse[kQueries], delta[kQueries];
  __shared__ long long query_token[kQueries], key_token[kKeys];
  __shared__ unsigned long long first_key, last_query;

  const BlockShape s = args.shape;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int head = blockIdx.y;
  const int col0 = blockIdx.x * kKeys;
  const int kv_head = (s.first_head + head) / s.heads_per_kv - s.first_kv_head;

  T* k_tile = reinterpret_cast<T*>(shared);
  T* v_tile = k_tile + kKeys * D;
  T* q_tile = v_tile + kKeys * D;
  T* do_tile = q_tile + kQueries * D;
  T* p_t = do_tile + kQueries * D;    // P^T [key][query]
  T* ds_t = p_t + kKeys * kQueries;   // dS^T [key][query], scale included
  float* scratch = reinterpret_cast<float*>(ds_t + kKeys * kQueries) + warp * scratch_floats<D>();
  float* s_t = scratch;                     // this warp's S^T (16 x 64)
  float* dp_t = scratch + 16 * kQueries;    // this warp's dP^T (16 x 64)

  const T* keys = kv;
  const T* values = kv + static_cast<int64_t>(s.kv_rows) * s.kv_heads * D;

  if (threadIdx.x == 0) first_key = ~0ull;
  __syncthreads();
  const int64_t kv_stride = static_cast<int64_t>(s.kv_heads) * D;
  load_tile<T, D>(k_tile, kKeys, keys + static_cast<int64_t>(kv_head) * D, kv_stride, col0, s.kv_rows);
  load_tile<T, D>(v_tile, kKeys, values + static_cast<int64_t>(kv_head) * D, kv_stride, col0, s.kv_rows);
  if (threadIdx.x < kKeys) {
    const int col = col0 + static_cast<int>(threadIdx.x);
    key_token[threadIdx.x] = col < s.kv_rows ? args.kv_tokens[col] : -1;
    if (col < s.kv_rows) atomicMin(&first_key, static_cast<unsigned long long>(args.kv_tokens[col]));
  }

  Accumulator d_k[D / 16], d_v[D / 16];
#pragma unroll
  for (int j = 0; j < D / 16; ++j) {
    wmma::fill_fragment(d_k[j], 0.0f);
    wmma::fill_fragment(d_v[j], 0.0f);
  }

  for (int row0 = 0; row0 < s.q_rows; row0 += kQueries) {
    if (threadIdx.x == 0) last_query = 0;
    __syncthreads();  // the previous step is done with the tiles, and the key tile is loaded
    if (threadIdx.x < kQueries) {
      const int row = row0 + static_cast<int>(threadIdx.x);
      const bool valid = row < s.q_rows;
      const int64_t row_head = static_cast<int64_t>(row) * s.heads + head;
      query_token[threadIdx.x] = valid ? args.q_tokens[row] : -1;
      lse[threadIdx.x] = valid ? args.stats[row_head] : 0.0f;
      delta[threadIdx.x] = valid ? args.stats[static_cast<int64_t>(s.q_rows) * s.heads + row_head] : 0.0f;
      if (valid) atomicMax(&last_query, static_cast<unsigned long long>(args.q_tokens[row]));
    }
    __syncthreads();
    const bool skip = args.mask.kind != 0 && last_query < first_key;
    __syncthreads();  // everyone has read last_query before thread 0 resets it
    if (skip) continue;

    const int64_t q_stride = static_cast<int64_t>(s.heads) * D;
    load_tile<T, D>(q_tile, kQueries, q + static_cast<int64_t>(head) * D, q_stride, row0, s.q_rows);
    load_tile<T, D>(do_tile, kQueries, d_out + static_cast<int64_t>(head) * D, q_stride, row0, s.q_rows);
    __syncthreads();

    // S^T and dP^T of the warp's 16 keys against the 64 queries.
    for (int n = 0; n < kQueries / 16; ++n) {
      Accumulator scores, d_probs;
      wmma::fill_fragment(scores, 0.0f);
      wmma::fill_fragment(d_probs, 0.0f);
#pragma unroll
      for (int k = 0; k < D / 16; ++k) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
        wmma::load_matrix_sync(a, k_tile + warp * 16 * D + k * 16, D);
        wmma::load_matrix_sync(b, q_tile + n * 16 * D + k * 16, D);
        wmma::mma_sync(scores, a, b, scores);
        wmma::load_matrix_sync(a, v_tile + warp * 16 * D + k * 16, D);
        wmma::load_matrix_sync(b, do_tile + n * 16 * D + k * 16, D);
        wmma::mma_sync(d_probs, a, b, d_probs);
      }
      wmma::store_matrix_sync(s_t + n * 16, scores, kQueries, wmma::mem_row_major);
      wmma::store_matrix_sync(dp_t + n * 16, d_probs, kQueries, wmma::mem_row_major);
    }
    __syncwarp();

    // P^T and dS^T in fp32, two lanes a key, 32 queries each; masked pairs contribute nothing.
    {
      const int r = lane / 2, half = lane % 2;
      const int key_row = warp * 16 + r;
      const long long key = key_token[key_row];
      for (int c = half * 32; c < half * 32 + 32; ++c) {
        const long long query = query_token[c];
        const bool allowed = key >= 0 && query >= 0 && mask_allows(args.mask, query, key);
        const float p = allowed ? __expf(s_t[r * kQueries + c] * s.scale - lse[c]) : 0.0f;
        const float ds = p * (dp_t[r * kQueries + c] - delta[c]) * s.scale;
        p_t[key_row * kQueries + c] = from_float<T>(p);
        ds_t[key_row * kQueries + c] = from_float<T>(ds);
      }
    }
    __syncwarp();

    // dV += P^T dO and dK += dS^T Q for the warp's keys.
#pragma unroll
    for (int k = 0; k < kQueries / 16; ++k) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> p_part, ds_part;
      wmma::load_matrix_sync(p_part, p_t + warp * 16 * kQueries + k * 16, kQueries);
      wmma::load_matrix_sync(ds_part, ds_t + warp * 16 * kQueries + k * 16, kQueries);
#pragma unroll
      for (int j = 0; j < D / 16; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
        wmma::load_matrix_sync(b, do_tile + k * 16 * D + j * 16, D);
        wmma::mma_sync(d_v[j], p_part, b, d_v[j]);
        wmma::load_matrix_sync(b, q_tile + k * 16 * D + j * 16, D);
        wmma::mma_sync(d_k[j], ds_part, b, d_k[j]);
      }
    }
    __syncthreads();  // every warp's dS^T is written

    // dQ of the warp's 16 queries over all 64 keys: dS[q][key] = dS^T[key][q], read column-major.
    float* staging = scratch;  // S^T and dP^T are consumed
    for (int j = 0; j < D / 16; ++j) {
      Accumulator d_q;
      wmma::fill_fragment(d_q, 0.0f);
#pragma unroll
      for (int k = 0; k < kKeys / 16; ++k) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
        wmma::load_matrix_sync(a, ds_t + k * 16 * kQueries + warp * 16, kQueries);
        wmma::load_matrix_sync(b, k_tile + k * 16 * D + j * 16, D);
        wmma::mma_sync(d_q, a, b, d_q);
      }
      wmma::store_matrix_sync(staging + j * 16, d_q, D, wmma::mem_row_major);
    }
    __syncwarp();
    for (int i = lane; i < 16 * D; i += 32) {
      const int row = row0 + warp * 16 + i / D;
      if (row < s.q_rows) atomicAdd(args.d_q + (static_cast<int64_t>(row) * s.heads + head) * D + i % D, staging[i]);
    }
  }

  // The walk is done: add the warp's dK and dV rows into the partials.
  __syncwarp();
  float* staging = scratch;
  float* d_keys = args.d_kv;
  float* d_values = args.d_kv + static_cast<int64_t>(s.kv_rows) * s.kv_heads * D;
  for (int which = 0; which < 2; ++which) {
#pragma unroll
    for (int j = 0; j < D / 16; ++j)
      wmma::store_matrix_sync(staging + j * 16, which == 0 ? d_k[j] : d_v[j], D, wmma::mem_row_major);
    __syncwarp();
    float* into = which == 0 ? d_keys : d_values;
    for (int i = lane; i < 16 * D; i += 32) {
      const int col = col0 + warp * 16 + i / D;
      if (col < s.kv_rows) atomicAdd(into + (static_cast<int64_t>(col) * s.kv_heads + kv_head) * D + i % D, staging[i]);
    }
    __syncwarp();
  }
}

template <typename T, int D>
cudaError_t launch(const BackwardArgs& args, cudaStream_t stream) {
  constexpr size_t bytes = shared_bytes<T, D>();
  const cudaError_t status = allow_shared_bytes(backward_wmma_kernel<T, D>, bytes);
  if (status != cudaSuccess) return status;
  const dim3 grid(static_cast<unsigned>((args.shape.kv_rows + kKeys - 1) / kKeys), static_cast<unsigned>(args.shape.heads));
  return launch_kernel(backward_wmma_kernel<T, D>, grid, dim3(kWarps * 32), bytes, stream, args, static_cast<const T*>(args.q),
                       static_cast<const T*>(args.kv), static_cast<const T*>(args.d_out));
}

}  // namespace

bool launch_backward_block_tensor_cores(const BackwardArgs& args, cudaStream_t stream, cudaError_t& status) {
  return launch_on_tensor_cores(args.shape, args.element, status, [&](auto element, auto head_dim) {
    return launch<decltype(element), decltype(head_dim)::value>(args, stream);
  });
}

}  // namespace tessera::backend::cuda
