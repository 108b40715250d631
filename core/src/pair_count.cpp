#include "tessera/core/pair_count.hpp"

#include <algorithm>

namespace tessera {

namespace {
int64_t floor_div(int64_t numerator, int64_t denominator) {  // denominator > 0
  int64_t quotient = numerator / denominator;
  if ((numerator % denominator != 0) && (numerator < 0)) --quotient;
  return quotient;
}
int64_t ceil_div(int64_t numerator, int64_t denominator) { return -floor_div(-numerator, denominator); }

// The sub-progression of `part` inside [begin, end).
TokenProgression clip(const TokenProgression& part, int64_t begin, int64_t end) {
  int64_t first = std::clamp<int64_t>(ceil_div(begin - part.start, part.stride), 0, part.count);
  int64_t stop = std::clamp<int64_t>(ceil_div(end - part.start, part.stride), 0, part.count);
  if (stop <= first) return TokenProgression{part.start, part.stride, 0};
  return TokenProgression{part.start + first * part.stride, part.stride, stop - first};
}

int64_t causal_pairs(const TokenProgression& queries, const TokenProgression& keys) {
  return count_keys_at_or_before(queries, keys, 0);
}
}  // namespace

__int128 floor_sum(int64_t count, int64_t m, int64_t a, int64_t b) {
  // Iterative form of the standard reduction: peel off whole multiples of m from a and b,
  // then swap the roles of the axes (the lattice points under a line, counted from the side).
  __int128 answer = 0;
  __int128 n = count, mm = m, aa = a, bb = b;
  while (true) {
    if (aa >= mm) {
      answer += (n - 1) * n / 2 * (aa / mm);
      aa %= mm;
    }
    if (bb >= mm) {
      answer += n * (bb / mm);
      bb %= mm;
    }
    __int128 y_max = aa * n + bb;
    if (y_max < mm) break;
    n = y_max / mm;
    bb = y_max % mm;
    std::swap(mm, aa);
  }
  return answer;
}

int64_t count_keys_at_or_before(const TokenProgression& queries, const TokenProgression& keys, int64_t shift) {
  if (queries.count <= 0 || keys.count <= 0) return 0;
  // For query m (token q0 + sq*m) the keys l with k0 + sk*l <= q - shift number
  // clamp(floor((A + sq*m)/sk) + 1, 0, K) with A = q0 - shift - k0. That is nondecreasing in m,
  // so split m into: nothing yet, a floor-sum middle, and all K keys.
  const int64_t sq = queries.stride, sk = keys.stride, M = queries.count, K = keys.count;
  const int64_t A = queries.start - shift - keys.start;
  // (Queries one token apart need no division: most blocks' parts are contiguous.)
  int64_t m_low = std::clamp<int64_t>(sq == 1 ? -A : ceil_div(-A, sq), 0, M);
  int64_t m_high = std::clamp<int64_t>(sq == 1 ? (K - 1) * sk - A : ceil_div((K - 1) * sk - A, sq), m_low, M);
  __int128 total = static_cast<__int128>(M - m_high) * K;
  int64_t middle = m_high - m_low;
  if (middle > 0 && sk == 1) {
    // Keys one token apart (every contiguous chunk and each half of a zigzag one): the middle's
    // counts A + sq*m + 1 form an arithmetic series. floor_sum's 128-bit divisions were most of
    // the grid's P^2 block counts (3 % of a 1,024-GPU simulate).
    const __int128 first = static_cast<__int128>(A) + static_cast<__int128>(sq) * m_low + 1;
    total += first * middle + static_cast<__int128>(sq) * middle * (middle - 1) / 2;
  } else if (middle > 0) {
    total += floor_sum(middle, sk, sq, A + sq * m_low) + middle;
  }
  return static_cast<int64_t>(total);
}

DocumentBounds::DocumentBounds(const std::vector<int64_t>& lengths) {
  starts_.reserve(lengths.size() + 1);
  starts_.push_back(0);
  for (int64_t length : lengths) starts_.push_back(starts_.back() + length);
}

size_t DocumentBounds::document_of(int64_t token) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), token);
  return static_cast<size_t>(it - starts_.begin()) - 1;
}

int64_t count_unmasked_pairs(const Mask& mask, const DocumentBounds& documents, const TokenSet& queries,
                             const TokenSet& keys) {
  int64_t total = 0;
  for (const auto& q : queries.parts) {
    for (const auto& k : keys.parts) {
      switch (mask.kind) {
        case MaskKind::full: total += q.count * k.count; break;
        case MaskKind::causal: total += causal_pairs(q, k); break;
        case MaskKind::sliding_window:
          // key in (q - window, q]: keys <= q minus keys <= q - window.
          total += causal_pairs(q, k) - count_keys_at_or_before(q, k, mask.window_tokens);
          break;
        case MaskKind::documents: {
          // A pair counts only inside one document, so only documents touching both the
          // query span and the key span can contribute.
          size_t first = std::max(documents.document_of(q.first()), documents.document_of(k.first()));
          size_t last = std::min(documents.document_of(q.last()), documents.document_of(k.last()));
          for (size_t d = first; d <= last && d < documents.size(); ++d) {
            total += causal_pairs(clip(q, documents.begin(d), documents.end(d)),
                                  clip(k, documents.begin(d), documents.end(d)));
          }
          break;
        }
      }
    }
  }
  return total;
}

}  // namespace tessera
