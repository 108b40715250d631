#pragma once
// Exact number of unmasked (query, key) pairs between two token sets, in closed form.
// The sets are arithmetic progressions, so "keys <= x" is a floor, and summing a floor over
// the queries of a progression is the classic floor sum, computed in O(log) steps. Nothing
// here ever visits individual pairs: a block of a 4M-token sequence costs the same as a tiny one.
#include <cstdint>
#include <vector>

#include "tessera/core/layout.hpp"
#include "tessera/core/problem.hpp"

namespace tessera {

// sum_{i=0}^{count-1} floor((a*i + b) / m) for count >= 0, m > 0, a >= 0, b >= 0.
__int128 floor_sum(int64_t count, int64_t m, int64_t a, int64_t b);

// #{(q, k) : q in queries, k in keys, k <= q - shift}.
int64_t count_keys_at_or_before(const TokenProgression& queries, const TokenProgression& keys, int64_t shift);

// Documents as consecutive runs: document d covers [starts[d], starts[d+1]).
class DocumentBounds {
 public:
  DocumentBounds() = default;
  explicit DocumentBounds(const std::vector<int64_t>& lengths);
  size_t size() const { return starts_.empty() ? 0 : starts_.size() - 1; }
  int64_t begin(size_t document) const { return starts_[document]; }
  int64_t end(size_t document) const { return starts_[document + 1]; }
  size_t document_of(int64_t token) const;  // the document holding token

 private:
  std::vector<int64_t> starts_;
};

// Unmasked pairs between all queries of `queries` and all keys of `keys` (one head).
int64_t count_unmasked_pairs(const Mask& mask, const DocumentBounds& documents, const TokenSet& queries,
                             const TokenSet& keys);

}  // namespace tessera
