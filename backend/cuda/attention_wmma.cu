// Tensor-core forward block kernel (FlashAttention-2 style, WMMA bf16/fp16 with fp32
// accumulation). A CTA of 4 warps takes 64 query rows of one head; each warp owns 16 rows and
// walks the block's keys in tiles of 64: S = Q K^T on tensor cores, the online softmax in
// fp32 (masks from token positions, as in the simple kernel), then O += P V on tensor cores.
// WMMA fragments hide which lane holds which row, so the running O lives in shared memory and
// is rescaled there. Tiles entirely above the diagonal of a causal-like mask are skipped
// (tokens within a chunk increase, so "first key after last query" decides it).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <mma.h>

#include <cstdlib>

#include "attention_kernels.hpp"
#include "element.cuh"
#include "kernel_launch.cuh"
#include "lse_merge.cuh"
#include "mask.cuh"
#include "shared_memory.cuh"
#include "tensor_core_shapes.cuh"
#include "tile_load.cuh"

namespace tessera::backend::cuda {

namespace {

constexpr int kRows = 64;     // query rows per CTA
constexpr int kCols = 64;     // keys per tile
constexpr int kWarps = 4;     // 16 query rows each


template <int D>
__host__ __device__ constexpr int warp_floats() {
  constexpr int scratch = 16 * (D > kCols ? D : kCols);
  return 16 * D + scratch + 64 + 8 * kCols;  // O, scratch (S, then P V), m/l/corr, P (16-bit)
}

template <typename T, int D>
constexpr size_t shared_bytes() {
  return 3 * kRows * D * sizeof(T) + kWarps * warp_floats<D>() * sizeof(float);
}

template <typename T, int D>
__global__ void __launch_bounds__(kWarps * 32) forward_wmma_kernel(ForwardArgs args, const T* q, const T* kv) {
  using namespace nvcuda;
  unsigned char* shared = dynamic_shared_memory();
  __shared__ unsigned long long last_query, first_key;
  __shared__ long long key_token[kCols];  // the tile's key positions (-1 past the block)
  const BlockShape s = args.shape;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int head = blockIdx.y;
  const int row0 = blockIdx.x * kRows;
  const int kv_head = (s.first_head + head) / s.heads_per_kv - s.first_kv_head;

  T* q_tile = reinterpret_cast<T*>(shared);
  T* k_tile = q_tile + kRows * D;
  T* v_tile = k_tile + kCols * D;
  float* mine = reinterpret_cast<float*>(v_tile + kCols * D) + warp * warp_floats<D>();
  constexpr int kScratch = 16 * (D > kCols ? D : kCols);
  float* o_acc = mine;
  float* scratch = o_acc + 16 * D;
  float* row_max = scratch + kScratch;
  float* row_sum = row_max + 16;
  float* row_scale = row_sum + 16;
  T* p_tile = reinterpret_cast<T*>(row_max + 64);

  const T* keys = kv;
  const T* values = kv + static_cast<int64_t>(s.kv_rows) * s.kv_heads * D;

  load_tile<T, D>(q_tile, kRows, q + static_cast<int64_t>(head) * D, static_cast<int64_t>(s.heads) * D, row0, s.q_rows);
  for (int i = lane; i < 16 * D; i += 32) o_acc[i] = 0.0f;
  if (lane < 16) {
    row_max[lane] = -CUDART_INF_F;
    row_sum[lane] = 0.0f;
  }
  if (threadIdx.x == 0) last_query = 0;
  __syncthreads();
  if (threadIdx.x < kRows && row0 + static_cast<int>(threadIdx.x) < s.q_rows)
    atomicMax(&last_query, static_cast<unsigned long long>(args.q_tokens[row0 + threadIdx.x]));

  for (int col0 = 0; col0 < s.kv_rows; col0 += kCols) {
    if (threadIdx.x == 0) first_key = ~0ull;
    __syncthreads();
    if (threadIdx.x < kCols) {
      const int col = col0 + static_cast<int>(threadIdx.x);
      key_token[threadIdx.x] = col < s.kv_rows ? args.kv_tokens[col] : -1;
      if (col < s.kv_rows) atomicMin(&first_key, static_cast<unsigned long long>(args.kv_tokens[col]));
    }
    __syncthreads();
    const bool skip = args.mask.kind != 0 && first_key > last_query;
    __syncthreads();  // everyone has read first_key before thread 0 resets it
    if (skip) continue;

    const int64_t kv_stride = static_cast<int64_t>(s.kv_heads) * D;
    load_tile<T, D>(k_tile, kCols, keys + static_cast<int64_t>(kv_head) * D, kv_stride, col0, s.kv_rows);
    load_tile<T, D>(v_tile, kCols, values + static_cast<int64_t>(kv_head) * D, kv_stride, col0, s.kv_rows);
    __syncthreads();

    // S (16 x 64) = Q_warp K^T.
    for (int n = 0; n < kCols / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < D / 16; ++k) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
        wmma::load_matrix_sync(a, q_tile + warp * 16 * D + k * 16, D);
        wmma::load_matrix_sync(b, k_tile + n * 16 * D + k * 16, D);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(scratch + n * 16, acc, kCols, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax: two lanes a row, 32 keys each.
    {
      const int r = lane / 2, half = lane % 2;
      const int row = row0 + warp * 16 + r;
      const int64_t query = row < s.q_rows ? args.q_tokens[row] : -1;
      float tile_max = -CUDART_INF_F;
      for (int c = half * 32; c < half * 32 + 32; ++c) {
        const long long key = key_token[c];
        const bool ok = row < s.q_rows && key >= 0 && mask_allows(args.mask, query, key);
        const float score = ok ? scratch[r * kCols + c] * s.scale : -CUDART_INF_F;
        scratch[r * kCols + c] = score;
        tile_max = fmaxf(tile_max, score);
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      const float old_max = row_max[r];
      const float new_max = fmaxf(old_max, tile_max);
      float sum = 0.0f;
      for (int c = half * 32; c < half * 32 + 32; ++c) {
        const float score = scratch[r * kCols + c];
        const float p = score == -CUDART_INF_F ? 0.0f : __expf(score - new_max);
        sum += p;
        p_tile[r * kCols + c] = from_float<T>(p);
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      const float correction = old_max == -CUDART_INF_F ? 0.0f : __expf(old_max - new_max);
      const float old_sum = row_sum[r];
      __syncwarp();
      if (half == 0) {
        row_sum[r] = old_sum * correction + sum;
        row_max[r] = new_max;
        row_scale[r] = correction;
      }
    }
    __syncwarp();

    // P V (16 x D) into the scratch (S is no longer needed), then O = O x correction + P V.
    for (int j = 0; j < D / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < kCols / 16; ++k) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
        wmma::load_matrix_sync(a, p_tile + k * 16, kCols);
        wmma::load_matrix_sync(b, v_tile + k * 16 * D + j * 16, D);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(scratch + j * 16, acc, D, wmma::mem_row_major);
    }
    __syncwarp();
    for (int i = lane; i < 16 * D; i += 32) o_acc[i] = o_acc[i] * row_scale[i / D] + scratch[i];
    __syncthreads();  // the next tile's keys overwrite k_tile and v_tile
  }

  // Merge the block's (O, LSE) into the accumulator, row by row.
  for (int r = 0; r < 16; ++r) {
    const int row = row0 + warp * 16 + r;
    if (row >= s.q_rows || row_sum[r] == 0.0f) continue;  // warp-uniform
    const float block_lse = row_max[r] + logf(row_sum[r]);
    float* out_row = args.out + (static_cast<int64_t>(row) * s.heads + head) * D;
    float* lse_slot = args.out + static_cast<int64_t>(s.q_rows) * s.heads * D + static_cast<int64_t>(row) * s.heads + head;
    const float a = *lse_slot;
    const LseMerge merge = merge_lse(a, block_lse);
    const float weight_b = merge.weight_b / row_sum[r];  // o_acc is not yet normalised
    for (int e = lane; e < D; e += 32) out_row[e] = merge.weight_a * out_row[e] + weight_b * o_acc[r * D + e];
    __syncwarp();
    if (lane == 0) *lse_slot = merge.lse;
    __syncwarp();
  }
}

template <typename T, int D>
cudaError_t launch(const ForwardArgs& args, cudaStream_t stream) {
  constexpr size_t bytes = shared_bytes<T, D>();
  const cudaError_t status = allow_shared_bytes(forward_wmma_kernel<T, D>, bytes);
  if (status != cudaSuccess) return status;
  const dim3 grid(static_cast<unsigned>((args.shape.q_rows + kRows - 1) / kRows), static_cast<unsigned>(args.shape.heads));
  return launch_kernel(forward_wmma_kernel<T, D>, grid, dim3(kWarps * 32), bytes, stream, args, static_cast<const T*>(args.q),
                       static_cast<const T*>(args.kv));
}

}  // namespace

bool simple_kernels_forced() {
  // Read at every launch (cheap next to a kernel) so that tests can compare both kernels.
  const char* value = std::getenv("TESSERA_SIMPLE_KERNELS");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

bool wmma_kernels_forced() {
  const char* value = std::getenv("TESSERA_WMMA_KERNELS");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

bool launch_forward_block_tensor_cores(const ForwardArgs& args, cudaStream_t stream, cudaError_t& status) {
  return launch_on_tensor_cores(args.shape, args.element, status, [&](auto element, auto head_dim) {
    return launch<decltype(element), decltype(head_dim)::value>(args, stream);
  });
}

}  // namespace tessera::backend::cuda
