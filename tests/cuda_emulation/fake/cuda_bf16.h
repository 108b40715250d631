#pragma once
// bfloat16 as the top 16 bits of an fp32, rounded to nearest even (what __float2bfloat16_rn does).
#include <cstdint>
#include <cstring>

#include "cuda_runtime_api.h"

struct __nv_bfloat16 {
  uint16_t bits = 0;
};

inline float __bfloat162float(__nv_bfloat16 value) {
  const uint32_t wide = static_cast<uint32_t>(value.bits) << 16;
  float result;
  std::memcpy(&result, &wide, sizeof result);
  return result;
}

inline __nv_bfloat16 __float2bfloat16_rn(float value) {
  uint32_t wide;
  std::memcpy(&wide, &value, sizeof wide);
  __nv_bfloat16 result;
  if ((wide & 0x7fffffffu) > 0x7f800000u) {
    result.bits = static_cast<uint16_t>((wide >> 16) | 0x40u);  // NaN stays NaN
    return result;
  }
  wide += 0x7fffu + ((wide >> 16) & 1u);
  result.bits = static_cast<uint16_t>(wide >> 16);
  return result;
}

inline uint16_t __bfloat16_as_ushort(__nv_bfloat16 value) { return value.bits; }
