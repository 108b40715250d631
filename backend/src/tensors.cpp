#include "tessera/backend/tensors.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "tessera/core/resource_limits.hpp"

namespace tessera::backend {

double round_to_dtype(DType dtype, double value) {
  const int mantissa_bits = dtype == DType::bf16 ? 7 : dtype == DType::fp16 ? 10 : 23;
  // A normal double rounds on its bits: keep the top `mantissa_bits` of its 52 fraction bits,
  // to nearest, ties to even; a carry out of the fraction steps the exponent up (to infinity from
  // the largest binade), as it should. 5 ns an element against 27 for frexp/ldexp (50 M values on
  // the two-core VM, reads included): every input element of every execution passes here (half
  // a billion at 32K tokens and 32 heads).
  auto bits = std::bit_cast<uint64_t>(value);
  const uint64_t exponent_field = (bits >> 52) & 0x7ff;
  if (exponent_field != 0 && exponent_field != 0x7ff) {
    const int dropped = 52 - mantissa_bits;
    const uint64_t lowest_kept = (bits >> dropped) & 1;
    bits += (uint64_t{1} << (dropped - 1)) - 1 + lowest_kept;
    bits &= ~((uint64_t{1} << dropped) - 1);
    return std::bit_cast<double>(bits);
  }
  // Zero (either sign gives +0), subnormals (rounded to the same relative precision), infinities
  // and NaN.
  if (value == 0) return 0;
  int exponent = 0;
  double fraction = std::frexp(value, &exponent);  // value = fraction * 2^exponent, |fraction| in [0.5, 1)
  double scale = std::ldexp(1.0, mantissa_bits + 1);
  return std::ldexp(std::nearbyint(fraction * scale) / scale, exponent);
}

double estimate_host_tensor_bytes(const Problem& problem) {
  const double tokens = static_cast<double>(problem.seq_len) * static_cast<double>(problem.batch);
  const double heads = static_cast<double>(problem.heads), kv_heads = static_cast<double>(problem.kv_heads);
  const double d = static_cast<double>(problem.head_dim), d_v = static_cast<double>(problem.head_dim_v);
  // q, d_out, out, lse, d_q per query head; k, v, d_k, d_v per key/value head.
  const double per_token = heads * (d + d_v + d_v + 1 + d) + kv_heads * (d + d_v + d + d_v);
  constexpr double kCopies = 3;
  return kCopies * static_cast<double>(sizeof(double)) * tokens * per_token;
}

void require_host_tensor_memory(const Problem& problem) {
  require_memory(estimate_host_tensor_bytes(problem),
                 "the tensors of " + std::to_string(problem.seq_len) + " tokens x " + std::to_string(problem.heads) +
                     " heads (head dims " + std::to_string(problem.head_dim) + "/" + std::to_string(problem.head_dim_v) + ")");
}

AttentionTensors random_inputs(const Problem& problem, uint64_t seed) {
  require_host_tensor_memory(problem);
  AttentionTensors tensors;
  tensors.tokens = problem.seq_len;
  tensors.heads = problem.heads;
  tensors.kv_heads = problem.kv_heads;
  tensors.head_dim = problem.head_dim;
  tensors.head_dim_v = problem.head_dim_v;
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto fill = [&](std::vector<double>& values, int64_t count) {
    values.resize(static_cast<size_t>(count));
    for (double& value : values) value = uniform(random);
  };
  const int64_t N = problem.seq_len;
  fill(tensors.q, N * problem.heads * problem.head_dim);
  fill(tensors.k, N * problem.kv_heads * problem.head_dim);
  fill(tensors.v, N * problem.kv_heads * problem.head_dim_v);
  fill(tensors.d_out, N * problem.heads * problem.head_dim_v);
  return tensors;
}

}  // namespace tessera::backend
