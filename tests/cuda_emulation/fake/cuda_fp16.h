#pragma once
// IEEE half precision through the compiler's _Float16 (rounds to nearest even).
#include <cstdint>
#include <cstring>

#include "cuda_runtime_api.h"

struct __half {
  _Float16 value = 0;
};

inline float __half2float(__half value) { return static_cast<float>(value.value); }
inline __half __float2half_rn(float value) { return __half{static_cast<_Float16>(value)}; }
inline uint16_t __half_as_ushort(__half value) {
  uint16_t bits;
  std::memcpy(&bits, &value.value, sizeof bits);
  return bits;
}
