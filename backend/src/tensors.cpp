#include "tessera/backend/tensors.hpp"

#include <cmath>
#include <random>

#include "tessera/core/resource_limits.hpp"

namespace tessera::backend {

double round_to_dtype(DType dtype, double value) {
  int mantissa_bits = dtype == DType::bf16 ? 7 : dtype == DType::fp16 ? 10 : 23;
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
