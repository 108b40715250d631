#include "tessera/core/data_size.hpp"

namespace tessera {

int64_t item_bytes(const Problem& problem, int32_t head_groups, int64_t chunk_tokens, DataKind kind) {
  const int64_t rows = problem.batch * chunk_tokens;
  const int64_t q_heads = query_heads_per_group(problem, head_groups);
  const int64_t kv_heads = kv_heads_per_group(problem, head_groups);
  const int64_t element = bytes_per_element(problem.dtype);
  constexpr int64_t kFloat32 = 4;
  switch (kind) {
    case DataKind::Q:
    case DataKind::dQ: return rows * q_heads * problem.head_dim * element;
    case DataKind::KV:
    case DataKind::dKV: return rows * kv_heads * (problem.head_dim + problem.head_dim_v) * element;
    case DataKind::O:
    case DataKind::dO: return rows * q_heads * problem.head_dim_v * element;
    case DataKind::LSE: return rows * q_heads * kFloat32;
    case DataKind::Stats: return rows * q_heads * 2 * kFloat32;
  }
  return 0;
}

}  // namespace tessera
