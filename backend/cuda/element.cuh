#pragma once
// The element types: conversions to and from fp32 in device code, and the step from the run-time
// ElementType to a kernel template, shared by the kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

// Calls launch(T{}) with T the element type's C++ type (host code choosing a kernel template).
template <typename Launch>
cudaError_t with_element_type(ElementType element, Launch&& launch) {
  switch (element) {
    case ElementType::fp32: return launch(float{});
    case ElementType::bf16: return launch(__nv_bfloat16{});
    case ElementType::fp16: return launch(__half{});
  }
  return cudaErrorInvalidValue;
}

__device__ inline float to_float(float value) { return value; }
__device__ inline float to_float(__nv_bfloat16 value) { return __bfloat162float(value); }
__device__ inline float to_float(__half value) { return __half2float(value); }

// Rounds to nearest even, as the CPU reference rounds its inputs.
template <typename T>
__device__ inline T from_float(float value) {
  if constexpr (std::is_same_v<T, float>) return value;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(value);
  else return __float2half_rn(value);
}

}  // namespace tessera::backend::cuda
