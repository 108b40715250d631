#include "tessera/core/layout.hpp"

#include "tessera/core/error.hpp"

namespace tessera {

std::string to_string(Layout layout) {
  switch (layout) {
    case Layout::contiguous: return "contiguous";
    case Layout::zigzag: return "zigzag";
    case Layout::striped: return "striped";
  }
  return "?";
}

Layout parse_layout(const std::string& text) {
  if (text == "contiguous") return Layout::contiguous;
  if (text == "zigzag") return Layout::zigzag;
  if (text == "striped" || text == "cyclic") return Layout::striped;
  throw UserError("layout '" + text + "' is not one of contiguous, zigzag, striped");
}

int64_t TokenSet::size() const {
  int64_t total = 0;
  for (const auto& part : parts) total += part.count;
  return total;
}

namespace {
// Piece k of `pieces` equal cuts of [0, seq_len): [k*N/pieces, (k+1)*N/pieces).
TokenProgression piece(int64_t seq_len, int64_t pieces, int64_t k) {
  // 128-bit products: seq_len * pieces can exceed 2^63 only for absurd inputs, but be safe.
  auto bound = [&](int64_t index) {
    return static_cast<int64_t>(static_cast<__int128>(index) * seq_len / pieces);
  };
  int64_t begin = bound(k);
  return TokenProgression{begin, 1, bound(k + 1) - begin};
}
}  // namespace

TokenSet chunk_tokens(Layout layout, int64_t seq_len, int64_t chunks, int64_t chunk) {
  TokenSet set;
  switch (layout) {
    case Layout::contiguous:
      set.parts.push_back(piece(seq_len, chunks, chunk));
      break;
    case Layout::zigzag:
      set.parts.push_back(piece(seq_len, 2 * chunks, chunk));
      set.parts.push_back(piece(seq_len, 2 * chunks, 2 * chunks - 1 - chunk));
      break;
    case Layout::striped: {
      int64_t count = chunk < seq_len ? (seq_len - chunk + chunks - 1) / chunks : 0;
      set.parts.push_back(TokenProgression{chunk, chunks, count});
      break;
    }
  }
  std::erase_if(set.parts, [](const TokenProgression& part) { return part.count == 0; });
  return set;
}

}  // namespace tessera
