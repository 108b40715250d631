#pragma once
// How the tokens of the sequence are dealt out to chunks.
//  contiguous: chunk i holds tokens [i*N/n, (i+1)*N/n) (floors; sizes differ by at most one).
//  zigzag:     the sequence is cut into 2n pieces the same way; chunk i holds pieces i and
//              2n-1-i, which balances causal work (Llama-3 / ring-flash-attention zigzag).
//  striped:    token t goes to chunk t mod n (Striped Attention; ATTENTION2D's cyclic layout).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

enum class Layout { contiguous, zigzag, striped };

std::string to_string(Layout layout);
Layout parse_layout(const std::string& text);  // throws UserError

// Tokens start, start + stride, ..., start + (count - 1) * stride.
struct TokenProgression {
  int64_t start = 0;
  int64_t stride = 1;
  int64_t count = 0;
  int64_t first() const { return start; }
  int64_t last() const { return start + (count - 1) * stride; }
};

// The tokens of one chunk: a few progressions (one or two), in increasing token order.
struct TokenSet {
  std::vector<TokenProgression> parts;
  int64_t size() const;
};

TokenSet chunk_tokens(Layout layout, int64_t seq_len, int64_t chunks, int64_t chunk);

}  // namespace tessera
