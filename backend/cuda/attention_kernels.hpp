#pragma once
// Launchers for the block attention kernels. Plain C++ (only the CUDA runtime's types), so the
// executor is compiled by the host compiler and only the kernels by nvcc.
//
// Buffers follow device_buffers.hpp: Q [rows][Hg][d], KV = K [rows][Gg][d] then V [rows][Gg][dv],
// dO [rows][Hg][dv] in the input dtype; O accumulators [rows][Hg][dv] then LSE [rows][Hg]; dQ
// [rows][Hg][d]; dKV = dK [rows][Gg][d] then dV [rows][Gg][dv]; Stats = LSE [rows][Hg] then
// delta [rows][Hg]; accumulators and Stats in fp32.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace tessera::backend::cuda {

enum class ElementType : int { fp32 = 0, bf16 = 1, fp16 = 2 };

// Masks are evaluated from token positions, so every layout (zigzag, striped) and every mask
// kind works with the same kernels. kind: 0 full, 1 causal, 2 sliding window, 3 documents.
struct MaskArgs {
  int kind = 0;
  int64_t window_tokens = 0;
  const int32_t* document_of_token = nullptr;  // documents: token -> document index
};

struct BlockShape {
  int32_t q_rows = 0, kv_rows = 0;
  int32_t heads = 0;          // query heads in the head group (Hg)
  int32_t kv_heads = 0;       // key/value heads in the head group (Gg)
  int32_t head_dim = 0, head_dim_v = 0;
  int32_t first_head = 0;     // global index of the group's first query head
  int32_t first_kv_head = 0;  // global index of the group's first key/value head
  int32_t heads_per_kv = 1;   // H / G of the whole problem
  float scale = 1;            // 1 / sqrt(head_dim)
};

struct ForwardArgs {
  BlockShape shape;
  MaskArgs mask;
  ElementType element = ElementType::bf16;
  const void* q = nullptr;
  const void* kv = nullptr;
  const int64_t* q_tokens = nullptr;
  const int64_t* kv_tokens = nullptr;
  float* out = nullptr;  // O accumulator (O then LSE), merged into
};

struct BackwardArgs {
  BlockShape shape;
  MaskArgs mask;
  ElementType element = ElementType::bf16;
  const void* q = nullptr;
  const void* kv = nullptr;
  const void* d_out = nullptr;
  const float* stats = nullptr;  // LSE then delta of the query chunk
  const int64_t* q_tokens = nullptr;
  const int64_t* kv_tokens = nullptr;
  float* d_q = nullptr;    // added into
  float* d_kv = nullptr;   // added into (atomically: many query rows add to one key row)
};

// Largest head dimension the kernels support (registers hold head_dim / 32 values per lane).
constexpr int32_t kMaxHeadDim = 256;

// Forward blocks with bf16/fp16 inputs and head_dim = head_dim_v of 64 or 128 run on the mma
// kernel (attention_mma.cu: mma.sync, ldmatrix, cp.async, FlashAttention-2's structure); other
// shapes on the simple kernel. TESSERA_SIMPLE_KERNELS=1 forces the simple kernel everywhere and
// TESSERA_WMMA_KERNELS=1 the older WMMA kernel (attention_wmma.cu) on the mma kernel's shapes,
// so that tests and benchmarks can compare them.
cudaError_t launch_forward_block(const ForwardArgs& args, cudaStream_t stream);
bool simple_kernels_forced();
bool wmma_kernels_forced();
// Each launches its kernel when that kernel takes the shape (and is not overridden by the
// environment); false, with nothing launched, otherwise.
bool launch_forward_block_mma(const ForwardArgs& args, cudaStream_t stream, cudaError_t& status);
bool launch_forward_block_tensor_cores(const ForwardArgs& args, cudaStream_t stream, cudaError_t& status);
// Backward blocks likewise (attention_mma_backward.cu, attention_wmma_backward.cu).
cudaError_t launch_backward_block(const BackwardArgs& args, cudaStream_t stream);
bool launch_backward_block_mma(const BackwardArgs& args, cudaStream_t stream, cudaError_t& status);
bool launch_backward_block_tensor_cores(const BackwardArgs& args, cudaStream_t stream, cudaError_t& status);
// into = LSE-weighted merge of two O accumulators of `row_heads` (row, head) pairs.
cudaError_t launch_merge_outputs(float* into, const float* from, int64_t row_heads, int32_t head_dim_v,
                                 cudaStream_t stream);
// into += from, elementwise (gradient partials).
cudaError_t launch_add(float* into, const float* from, int64_t count, cudaStream_t stream);
// Sets `count` floats to `value` (O accumulators start at O = 0 and LSE = -infinity).
cudaError_t launch_fill(float* into, float value, int64_t count, cudaStream_t stream);
// Converts fp32 values into the element type (round to nearest even).
cudaError_t launch_convert(void* into, ElementType element, const float* from, int64_t count, cudaStream_t stream);

}  // namespace tessera::backend::cuda
