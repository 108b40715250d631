#pragma once
// Folding one softmax partial into another by their log-sum-exps, shared by every kernel that
// merges (O, LSE) pairs: the merged LSE is log(e^a + e^b), computed without overflow, and the
// partials weigh e^(a - merged) and e^(b - merged). `a` may be -infinity (an empty accumulator);
// `b` must be finite (callers skip empty partials).
#include <math_constants.h>

#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

struct LseMerge {
  float lse, weight_a, weight_b;
};

__device__ inline LseMerge merge_lse(float a, float b) {
  if (a == -CUDART_INF_F) return {b, 0.0f, 1.0f};
  const float merged = fmaxf(a, b) + log1pf(__expf(-fabsf(a - b)));
  return {merged, __expf(a - merged), __expf(b - merged)};
}

}  // namespace tessera::backend::cuda
