#include "tessera/core/checked_math.hpp"

#include <cstdio>

namespace tessera {

void throw_too_large(const std::string& what) {
  throw UserError(what + " is too large: the product or sum overflows 64-bit integers");
}

void require_finite(double value, const std::string& what) {
  if (std::isfinite(value)) return;
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  throw UserError(what + ": expected a finite number (got " + text + ")");
}

}  // namespace tessera
