#pragma once
// The block shapes the tensor-core kernels take (bf16/fp16, head_dim = head_dim_v of 64 or
// 128), and the step from a run-time shape to a kernel template, shared by forward and backward
// and by the mma and WMMA kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

// Calls launch(T{}, std::integral_constant<int, D>{}) for a supported shape (tags, as the CUDA
// code is compiled as C++17) and stores its status; returns false, launching nothing, otherwise.
template <typename Launch>
bool launch_on_tensor_core_shape(const BlockShape& s, ElementType element, cudaError_t& status, Launch&& launch) {
  if (s.head_dim != s.head_dim_v || element == ElementType::fp32) return false;
  if (s.head_dim != 64 && s.head_dim != 128) return false;
  const bool bf16 = element == ElementType::bf16;
  using D64 = std::integral_constant<int, 64>;
  using D128 = std::integral_constant<int, 128>;
  if (s.head_dim == 64) status = bf16 ? launch(__nv_bfloat16{}, D64{}) : launch(__half{}, D64{});
  else status = bf16 ? launch(__nv_bfloat16{}, D128{}) : launch(__half{}, D128{});
  return true;
}

// The mma kernels (attention_mma*.cu) take the supported shapes unless the environment forces
// the simple or the WMMA kernels; the WMMA kernels take them when forced.
template <typename Launch>
bool launch_on_mma(const BlockShape& s, ElementType element, cudaError_t& status, Launch&& launch) {
  if (simple_kernels_forced() || wmma_kernels_forced()) return false;
  return launch_on_tensor_core_shape(s, element, status, launch);
}
template <typename Launch>
bool launch_on_tensor_cores(const BlockShape& s, ElementType element, cudaError_t& status, Launch&& launch) {
  if (simple_kernels_forced()) return false;
  return launch_on_tensor_core_shape(s, element, status, launch);
}

// Kernels above 48 KB of dynamic shared memory must opt in (per device; cheap to repeat).
template <typename Kernel>
cudaError_t allow_shared_bytes(Kernel kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace tessera::backend::cuda
