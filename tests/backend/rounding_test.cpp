// Rounding to a dtype's precision (backend/tensors.hpp), which every executor applies to every
// input: hand-worked ties and carries, and agreement with the definition (the value's fraction
// from frexp, scaled to the kept bits, rounded to nearest even) on values of every magnitude.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "tessera/backend/tensors.hpp"

using namespace tessera;
using namespace tessera::backend;

namespace {

// The definition: |fraction| in [0.5, 1) times 2^(kept bits + 1) is an integer after rounding.
double by_definition(DType dtype, double value) {
  const int mantissa_bits = dtype == DType::bf16 ? 7 : dtype == DType::fp16 ? 10 : 23;
  if (value == 0) return 0;
  int exponent = 0;
  const double fraction = std::frexp(value, &exponent);
  const double scale = std::ldexp(1.0, mantissa_bits + 1);
  return std::ldexp(std::nearbyint(fraction * scale) / scale, exponent);
}

bool same_bits(double a, double b) {
  return std::isnan(a) ? std::isnan(b) : (a == b && std::signbit(a) == std::signbit(b));
}

}  // namespace

TEST_CASE("rounding to bf16, fp16 and fp32: ties to even, carries, signs, by hand", "[backend][rounding]") {
  const double u = std::ldexp(1.0, -7);  // bf16's last place at 1 (7 fraction bits)
  CHECK(round_to_dtype(DType::bf16, 1 + u / 2) == 1.0);                        // tie, 1 is even
  CHECK(round_to_dtype(DType::bf16, 1 + 3 * u / 2) == 1 + 2 * u);              // tie, 1 + u is odd
  CHECK(round_to_dtype(DType::bf16, 1 + u / 2 + std::ldexp(1.0, -30)) == 1 + u);  // just past the tie
  CHECK(round_to_dtype(DType::bf16, 1 + u / 2 - std::ldexp(1.0, -30)) == 1.0);    // just short of it
  CHECK(round_to_dtype(DType::bf16, 2 - u / 4) == 2.0);                        // carries into the exponent
  CHECK(round_to_dtype(DType::bf16, -(1 + 3 * u / 2)) == -(1 + 2 * u));        // the sign stays
  CHECK(round_to_dtype(DType::bf16, 0.75 + u / 4) == 0.75);                    // below 1 the place is u / 2: a tie
  const double h = std::ldexp(1.0, -10), f = std::ldexp(1.0, -23);
  CHECK(round_to_dtype(DType::fp16, 1 + h / 2) == 1.0);
  CHECK(round_to_dtype(DType::fp16, 1 + 3 * h / 2) == 1 + 2 * h);
  CHECK(round_to_dtype(DType::fp32, 1 + f / 2) == 1.0);
  CHECK(round_to_dtype(DType::fp32, 1 + 3 * f / 2) == 1 + 2 * f);
  // Exact values stay: 1.5 and -0.375 have 1 and 2 fraction bits.
  CHECK(round_to_dtype(DType::bf16, 1.5) == 1.5);
  CHECK(round_to_dtype(DType::bf16, -0.375) == -0.375);
  // The largest double rounds up past the largest exponent: infinity. Zero of either sign is +0.
  CHECK(round_to_dtype(DType::bf16, std::numeric_limits<double>::max()) == std::numeric_limits<double>::infinity());
  CHECK(same_bits(round_to_dtype(DType::bf16, -0.0), 0.0));
  CHECK(std::isnan(round_to_dtype(DType::fp16, std::numeric_limits<double>::quiet_NaN())));
  CHECK(round_to_dtype(DType::fp32, -std::numeric_limits<double>::infinity()) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("rounding agrees with its definition bit for bit on values of every magnitude", "[backend][rounding]") {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> fraction(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-1074, 1023);
  int disagreements = 0;
  for (int sample = 0; sample < 300000; ++sample) {
    // Uniform inputs as random_inputs draws them, values of any exponent (subnormals included),
    // and exact ties of bf16 and of fp16: kept bits, then one bit half a place past the last.
    const double drawn = fraction(random);
    const double anywhere = std::ldexp(fraction(random), exponent(random));
    const int binade = sample % 40 - 20;
    const double bf16_tie = std::ldexp(1.0 + (sample % 128) * std::ldexp(1.0, -7) + std::ldexp(1.0, -8), binade);
    const double fp16_tie = std::ldexp(1.0 + (sample % 1024) * std::ldexp(1.0, -10) + std::ldexp(1.0, -11), binade);
    for (DType dtype : {DType::bf16, DType::fp16, DType::fp32})
      for (double value : {drawn, anywhere, bf16_tie, -bf16_tie, fp16_tie})
        if (!same_bits(round_to_dtype(dtype, value), by_definition(dtype, value))) ++disagreements;
  }
  CHECK(disagreements == 0);
}
