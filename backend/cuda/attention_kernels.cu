// Block attention kernels: one warp per (query row, head). Lanes split the head dimension, dot
// products reduce across the warp, and the block's softmax runs online over its keys in fp32,
// so a block of any shape needs no scratch memory. Forward merges the block's (O, LSE) into
// the running accumulator by LSE weights; backward recomputes P from the forward's LSE
// (FlashAttention-2) and adds dQ, dK, dV into fp32 partials.
//
// Why this simple form: correctness on every mask, layout, GQA shape and odd size first. It
// uses CUDA cores; common shapes (bf16/fp16, head dim 64 or 128) go to the tensor-core kernels
// of attention_mma.cu (forward) and attention_mma_backward.cu (backward) instead.
#include "attention_kernels.hpp"
#include "element.cuh"
#include "kernel_launch.cuh"
#include "lse_merge.cuh"
#include "mask.cuh"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <math_constants.h>

namespace tessera::backend::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
constexpr int kPerLane = kMaxHeadDim / kWarp;

__device__ inline float warp_sum(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// Folds (block_out, block_lse) into the accumulator of one (row, head); lanes hold dv values.
__device__ inline void merge_row(float* out_row, float* lse_slot, const float* block_out, float block_lse, int dv,
                                 int lane) {
  const float a = *lse_slot;
  const LseMerge merge = merge_lse(a, block_lse);
  for (int slot = 0; slot < kPerLane; ++slot) {
    const int e = lane + slot * kWarp;
    if (e < dv) out_row[e] = merge.weight_a * out_row[e] + merge.weight_b * block_out[slot];
  }
  __syncwarp();
  if (lane == 0) *lse_slot = merge.lse;
}

template <typename T>
__global__ void forward_block_kernel(ForwardArgs args, const T* q, const T* kv) {
  const BlockShape s = args.shape;
  const int lane = threadIdx.x % kWarp;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (warp >= static_cast<int64_t>(s.q_rows) * s.heads) return;
  const int row = static_cast<int>(warp / s.heads), head = static_cast<int>(warp % s.heads);
  const int kv_head = (s.first_head + head) / s.heads_per_kv - s.first_kv_head;
  const int d = s.head_dim, dv = s.head_dim_v;
  const int64_t query_token = args.q_tokens[row];

  float q_lane[kPerLane], o_lane[kPerLane];
  for (int slot = 0; slot < kPerLane; ++slot) {
    const int e = lane + slot * kWarp;
    q_lane[slot] = e < d ? to_float(q[(static_cast<int64_t>(row) * s.heads + head) * d + e]) : 0.0f;
    o_lane[slot] = 0.0f;
  }
  const T* keys = kv;
  const T* values = kv + static_cast<int64_t>(s.kv_rows) * s.kv_heads * d;
  float running_max = -CUDART_INF_F, running_sum = 0.0f;
  for (int col = 0; col < s.kv_rows; ++col) {
    if (!mask_allows(args.mask, query_token, args.kv_tokens[col])) continue;  // same for the whole warp
    const T* key = keys + (static_cast<int64_t>(col) * s.kv_heads + kv_head) * d;
    float partial = 0.0f;
    for (int slot = 0; slot < kPerLane; ++slot) {
      const int e = lane + slot * kWarp;
      if (e < d) partial += q_lane[slot] * to_float(key[e]);
    }
    const float score = warp_sum(partial) * s.scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = __expf(running_max - new_max);
    const float weight = __expf(score - new_max);
    running_sum = running_sum * correction + weight;
    const T* value = values + (static_cast<int64_t>(col) * s.kv_heads + kv_head) * dv;
    for (int slot = 0; slot < kPerLane; ++slot) {
      const int e = lane + slot * kWarp;
      if (e < dv) o_lane[slot] = o_lane[slot] * correction + weight * to_float(value[e]);
    }
    running_max = new_max;
  }
  if (running_sum == 0.0f) return;  // every key of this block is masked for this row
  for (int slot = 0; slot < kPerLane; ++slot) o_lane[slot] /= running_sum;
  float* out_row = args.out + (static_cast<int64_t>(row) * s.heads + head) * dv;
  float* lse_slot = args.out + static_cast<int64_t>(s.q_rows) * s.heads * dv + static_cast<int64_t>(row) * s.heads + head;
  merge_row(out_row, lse_slot, o_lane, running_max + logf(running_sum), dv, lane);
}

template <typename T>
__global__ void backward_block_kernel(BackwardArgs args, const T* q, const T* kv, const T* d_out) {
  const BlockShape s = args.shape;
  const int lane = threadIdx.x % kWarp;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (warp >= static_cast<int64_t>(s.q_rows) * s.heads) return;
  const int row = static_cast<int>(warp / s.heads), head = static_cast<int>(warp % s.heads);
  const int kv_head = (s.first_head + head) / s.heads_per_kv - s.first_kv_head;
  const int d = s.head_dim, dv = s.head_dim_v;
  const int64_t row_head = static_cast<int64_t>(row) * s.heads + head;
  const int64_t query_token = args.q_tokens[row];
  const float lse = args.stats[row_head];
  const float delta = args.stats[static_cast<int64_t>(s.q_rows) * s.heads + row_head];

  float q_lane[kPerLane], g_lane[kPerLane], dq_lane[kPerLane];
  for (int slot = 0; slot < kPerLane; ++slot) {
    const int e = lane + slot * kWarp;
    q_lane[slot] = e < d ? to_float(q[row_head * d + e]) : 0.0f;
    g_lane[slot] = e < dv ? to_float(d_out[row_head * dv + e]) : 0.0f;
    dq_lane[slot] = 0.0f;
  }
  const T* keys = kv;
  const T* values = kv + static_cast<int64_t>(s.kv_rows) * s.kv_heads * d;
  float* d_keys = args.d_kv;
  float* d_values = args.d_kv + static_cast<int64_t>(s.kv_rows) * s.kv_heads * d;
  for (int col = 0; col < s.kv_rows; ++col) {
    if (!mask_allows(args.mask, query_token, args.kv_tokens[col])) continue;
    const int64_t key_head = static_cast<int64_t>(col) * s.kv_heads + kv_head;
    const T* key = keys + key_head * d;
    const T* value = values + key_head * dv;
    float score_part = 0.0f, dp_part = 0.0f;
    for (int slot = 0; slot < kPerLane; ++slot) {
      const int e = lane + slot * kWarp;
      if (e < d) score_part += q_lane[slot] * to_float(key[e]);
      if (e < dv) dp_part += g_lane[slot] * to_float(value[e]);
    }
    const float p = __expf(warp_sum(score_part) * s.scale - lse);
    const float ds = p * (warp_sum(dp_part) - delta) * s.scale;
    for (int slot = 0; slot < kPerLane; ++slot) {
      const int e = lane + slot * kWarp;
      if (e < d) {
        dq_lane[slot] += ds * to_float(key[e]);
        atomicAdd(d_keys + key_head * d + e, ds * q_lane[slot]);
      }
      if (e < dv) atomicAdd(d_values + key_head * dv + e, p * g_lane[slot]);
    }
  }
  for (int slot = 0; slot < kPerLane; ++slot) {
    const int e = lane + slot * kWarp;
    if (e < d) args.d_q[row_head * d + e] += dq_lane[slot];
  }
}

__global__ void merge_outputs_kernel(float* into, const float* from, int64_t row_heads, int32_t dv) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= row_heads) return;
  float* into_lse = into + row_heads * dv;
  const float* from_lse = from + row_heads * dv;
  const float a = into_lse[index], b = from_lse[index];
  if (b == -CUDART_INF_F) return;
  const LseMerge merge = merge_lse(a, b);
  for (int32_t e = 0; e < dv; ++e)
    into[index * dv + e] = merge.weight_a * into[index * dv + e] + merge.weight_b * from[index * dv + e];
  into_lse[index] = merge.lse;
}

__global__ void add_kernel(float* into, const float* from, int64_t count) {
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x)
    into[index] += from[index];
}

__global__ void fill_kernel(float* into, float value, int64_t count) {
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x)
    into[index] = value;
}

template <typename T>
__global__ void convert_kernel(T* into, const float* from, int64_t count) {
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    into[index] = from_float<T>(from[index]);
  }
}

unsigned warp_blocks(int64_t warps) { return static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock); }
unsigned grid_for(int64_t count) { return static_cast<unsigned>(std::min<int64_t>((count + 255) / 256, 65535)); }

}  // namespace

cudaError_t launch_forward_block(const ForwardArgs& args, cudaStream_t stream) {
  if (args.shape.head_dim > kMaxHeadDim || args.shape.head_dim_v > kMaxHeadDim) return cudaErrorInvalidValue;
  const int64_t warps = static_cast<int64_t>(args.shape.q_rows) * args.shape.heads;
  if (warps == 0 || args.shape.kv_rows == 0) return cudaSuccess;
  cudaError_t status = cudaSuccess;
  if (launch_forward_block_mma(args, stream, status)) return status;
  if (launch_forward_block_tensor_cores(args, stream, status)) return status;
  const dim3 grid(warp_blocks(warps)), block(kWarp * kWarpsPerBlock);
  auto launch = [&](auto element) {
    using T = decltype(element);
    return launch_kernel(forward_block_kernel<T>, grid, block, 0, stream, args, static_cast<const T*>(args.q),
                         static_cast<const T*>(args.kv));
  };
  return with_element_type(args.element, launch);
}

cudaError_t launch_backward_block(const BackwardArgs& args, cudaStream_t stream) {
  if (args.shape.head_dim > kMaxHeadDim || args.shape.head_dim_v > kMaxHeadDim) return cudaErrorInvalidValue;
  const int64_t warps = static_cast<int64_t>(args.shape.q_rows) * args.shape.heads;
  if (warps == 0 || args.shape.kv_rows == 0) return cudaSuccess;
  cudaError_t status = cudaSuccess;
  if (launch_backward_block_mma(args, stream, status)) return status;
  if (launch_backward_block_tensor_cores(args, stream, status)) return status;
  const dim3 grid(warp_blocks(warps)), block(kWarp * kWarpsPerBlock);
  auto launch = [&](auto element) {
    using T = decltype(element);
    return launch_kernel(backward_block_kernel<T>, grid, block, 0, stream, args, static_cast<const T*>(args.q),
                         static_cast<const T*>(args.kv), static_cast<const T*>(args.d_out));
  };
  return with_element_type(args.element, launch);
}

cudaError_t launch_merge_outputs(float* into, const float* from, int64_t row_heads, int32_t head_dim_v, cudaStream_t stream) {
  if (row_heads == 0) return cudaSuccess;
  return launch_kernel(merge_outputs_kernel, dim3(static_cast<unsigned>((row_heads + 255) / 256)), dim3(256), 0, stream, into, from,
                       row_heads, head_dim_v);
}

cudaError_t launch_add(float* into, const float* from, int64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return launch_kernel(add_kernel, dim3(grid_for(count)), dim3(256), 0, stream, into, from, count);
}

cudaError_t launch_fill(float* into, float value, int64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return launch_kernel(fill_kernel, dim3(grid_for(count)), dim3(256), 0, stream, into, value, count);
}

cudaError_t launch_convert(void* into, ElementType element, const float* from, int64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  auto launch = [&](auto type) {
    using T = decltype(type);
    return launch_kernel(convert_kernel<T>, dim3(grid_for(count)), dim3(256), 0, stream, static_cast<T*>(into), from, count);
  };
  return with_element_type(element, launch);
}

}  // namespace tessera::backend::cuda
