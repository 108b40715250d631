#include "tessera/backend/tensors.hpp"

#include <cmath>
#include <random>

namespace tessera::backend {

double round_to_dtype(DType dtype, double value) {
  int mantissa_bits = dtype == DType::bf16 ? 7 : dtype == DType::fp16 ? 10 : 23;
  if (value == 0) return 0;
  int exponent = 0;
  double fraction = std::frexp(value, &exponent);  // value = fraction * 2^exponent, |fraction| in [0.5, 1)
  double scale = std::ldexp(1.0, mantissa_bits + 1);
  return std::ldexp(std::nearbyint(fraction * scale) / scale, exponent);
}

AttentionTensors random_inputs(const Problem& problem, uint64_t seed) {
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
