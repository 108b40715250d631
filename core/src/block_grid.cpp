#include "tessera/core/block_grid.hpp"

namespace tessera {

BlockGrid::BlockGrid(const Problem& problem, Layout layout, int64_t chunks)
    : problem_(problem), layout_(layout), chunks_(chunks) {
  if (problem.mask.kind == MaskKind::documents) documents_ = DocumentBounds(problem.mask.document_lengths);
  tokens_.reserve(static_cast<size_t>(chunks));
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    tokens_.push_back(tessera::chunk_tokens(layout, problem.seq_len, chunks, chunk));
    token_counts_.push_back(tokens_.back().size());
  }
  pairs_cache_.assign(static_cast<size_t>(chunks * chunks), -1);
}

int64_t BlockGrid::count_pairs(int64_t q_chunk, int64_t kv_chunk) const {
  int64_t& cached = pairs_cache_[static_cast<size_t>(q_chunk * chunks_ + kv_chunk)];
  cached = count_unmasked_pairs(problem_.mask, documents_, tokens(q_chunk), tokens(kv_chunk));
  return cached;
}

int64_t BlockGrid::total_pairs() const {
  if (total_pairs_ >= 0) return total_pairs_;
  int64_t total = 0;
  for (int64_t i = 0; i < chunks_; ++i)
    for (int64_t j = 0; j < chunks_; ++j) total += pairs(i, j);
  total_pairs_ = total;
  return total;
}

bool BlockGrid::is_grid_of(const Problem& problem, Layout layout, int64_t chunks) const {
  const Problem& a = problem_;
  const Problem& b = problem;
  return layout_ == layout && chunks_ == chunks && a.batch == b.batch && a.seq_len == b.seq_len && a.heads == b.heads &&
         a.kv_heads == b.kv_heads && a.head_dim == b.head_dim && a.head_dim_v == b.head_dim_v && a.dtype == b.dtype &&
         a.mask.kind == b.mask.kind && a.mask.window_tokens == b.mask.window_tokens &&
         a.mask.document_lengths == b.mask.document_lengths && a.pass == b.pass;
}

BlockGrid BlockGrid::with_batch(int64_t batch) const {
  BlockGrid grid = *this;
  grid.problem_.batch = batch;
  return grid;
}

}  // namespace tessera
