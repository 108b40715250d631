#include "tessera/core/data_size.hpp"

#include <initializer_list>

#include "tessera/core/checked_math.hpp"

namespace tessera {

int64_t item_bytes(const Problem& problem, int32_t head_groups, int64_t chunk_tokens, DataKind kind) {
  // Problem::validate bounds the whole problem's bytes by 2^48, so no product here can wrap for
  // a validated problem; checked all the same, as the one place item sizes are made.
  const auto product = [](std::initializer_list<int64_t> factors) {
    int64_t result = 1;
    for (int64_t factor : factors)  // (no message string built on the hot path)
      if (__builtin_mul_overflow(result, factor, &result)) throw_too_large("the bytes of one data item");
    return result;
  };
  const int64_t rows = product({problem.batch, chunk_tokens});
  const int64_t q_heads = query_heads_per_group(problem, head_groups);
  const int64_t kv_heads = kv_heads_per_group(problem, head_groups);
  const int64_t element = bytes_per_element(problem.dtype);
  constexpr int64_t kFloat32 = 4;
  switch (kind) {
    case DataKind::Q:
    case DataKind::dQ: return product({rows, q_heads, problem.head_dim, element});
    case DataKind::KV:
    case DataKind::dKV: return product({rows, kv_heads, problem.head_dim + problem.head_dim_v, element});
    case DataKind::O:
    case DataKind::dO: return product({rows, q_heads, problem.head_dim_v, element});
    case DataKind::LSE: return product({rows, q_heads, kFloat32});
    case DataKind::Stats: return product({rows, q_heads, 2 * kFloat32});
  }
  return 0;
}

}  // namespace tessera
