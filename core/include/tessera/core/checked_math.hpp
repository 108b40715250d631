#pragma once
// Arithmetic on sizes from user input, checked: a product or sum that would wrap throws a
// UserError naming what was being computed, so no wrapped figure is ever printed. `what` reads
// as the subject of "... is too large", e.g. "--batch x --seq x --heads".
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera {

[[noreturn]] void throw_too_large(const std::string& what);

inline int64_t checked_multiply(int64_t a, int64_t b, const std::string& what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) throw_too_large(what);
  return product;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) throw_too_large(what);
  return sum;
}

inline uint64_t checked_multiply_unsigned(uint64_t a, uint64_t b, const std::string& what) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) throw_too_large(what);
  return product;
}

// `value` as an int32_t, or a UserError naming `what`.
inline int32_t checked_int32(int64_t value, const std::string& what) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
    throw_too_large(what);
  return static_cast<int32_t>(value);
}

// A finite number, or a UserError: "WHAT: expected a finite number (got inf)".
void require_finite(double value, const std::string& what);

}  // namespace tessera
