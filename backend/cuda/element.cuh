#pragma once
// Conversions between the 16-bit element types and fp32 in device code, shared by the kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace tessera::backend::cuda {

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
