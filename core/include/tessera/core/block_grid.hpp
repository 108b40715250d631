#pragma once
// The n x n grid of attention blocks of a problem under a layout: block (i, j) is query chunk i
// against key/value chunk j. Work is the exact count of unmasked (query, key) pairs of one head,
// computed per block in closed form and cached.
#include <cstdint>
#include <vector>

#include "tessera/core/layout.hpp"
#include "tessera/core/pair_count.hpp"
#include "tessera/core/problem.hpp"

namespace tessera {

class BlockGrid {
 public:
  BlockGrid(const Problem& problem, Layout layout, int64_t chunks);

  const Problem& problem() const { return problem_; }
  Layout layout() const { return layout_; }
  int64_t chunks() const { return chunks_; }
  const TokenSet& tokens(int64_t chunk) const { return tokens_[static_cast<size_t>(chunk)]; }
  int64_t chunk_tokens(int64_t chunk) const { return token_counts_[static_cast<size_t>(chunk)]; }

  // Unmasked (query, key) pairs of block (i, j), one head, one sequence of the batch.
  // Inline where already counted (the cost model asks for every block of every op).
  int64_t pairs(int64_t q_chunk, int64_t kv_chunk) const {
    const int64_t cached = pairs_cache_[static_cast<size_t>(q_chunk * chunks_ + kv_chunk)];
    return cached >= 0 ? cached : count_pairs(q_chunk, kv_chunk);
  }
  bool has_work(int64_t q_chunk, int64_t kv_chunk) const { return pairs(q_chunk, kv_chunk) > 0; }
  // Sum of pairs over the whole grid (one head): N*N full, N(N+1)/2 causal, ... Made once,
  // which also fills every block's pairs (the schedule cache relies on it).
  int64_t total_pairs() const;
  // The same grid for a batch of `batch` sequences: pairs are counted per sequence, so every
  // table (the counted pairs too) carries over; only problem().batch changes.
  BlockGrid with_batch(int64_t batch) const;
  // Whether this is the grid BlockGrid(problem, layout, chunks) would make: every field of the
  // problem (a consumer may read any through problem()), the layout and the chunks.
  bool is_grid_of(const Problem& problem, Layout layout, int64_t chunks) const;

 private:
  Problem problem_;
  Layout layout_;
  int64_t chunks_;
  DocumentBounds documents_;
  std::vector<TokenSet> tokens_;
  std::vector<int64_t> token_counts_;
  int64_t count_pairs(int64_t q_chunk, int64_t kv_chunk) const;  // counts and caches
  mutable std::vector<int64_t> pairs_cache_;  // -1 = not computed yet
  mutable int64_t total_pairs_ = -1;          // -1 = not computed yet
};

}  // namespace tessera
