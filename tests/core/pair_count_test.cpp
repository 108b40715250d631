// Closed-form pair counting and the block grid, checked against references that share no code
// with the library: a brute-force walk over every (query, key) pair for small sequences, a
// direct loop for floor sums, and hand-derived closed forms at scale.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/pair_count.hpp"

using namespace tessera;

namespace {

// --- Independent references ------------------------------------------------------------------

// The chunk that holds token t, straight from the layout definitions (not from chunk_tokens):
//  contiguous: chunk c holds [floor(cN/n), floor((c+1)N/n));
//  zigzag: 2n pieces cut the same way, piece k goes to chunk k (k < n) or 2n-1-k;
//  striped: t mod n.
int64_t owner_of(Layout layout, int64_t N, int64_t n, int64_t t) {
  auto piece_of = [&](int64_t pieces) {
    for (int64_t k = 0; k < pieces; ++k)
      if (t >= k * N / pieces && t < (k + 1) * N / pieces) return k;
    return int64_t{-1};
  };
  switch (layout) {
    case Layout::contiguous: return piece_of(n);
    case Layout::zigzag: {
      int64_t k = piece_of(2 * n);
      return k < n ? k : 2 * n - 1 - k;
    }
    case Layout::striped: return t % n;
  }
  return -1;
}

// The tokens of one chunk, listed directly from the layout definitions (used at scale).
std::vector<int64_t> reference_chunk(Layout layout, int64_t N, int64_t n, int64_t c) {
  std::vector<int64_t> tokens;
  auto add_piece = [&](int64_t pieces, int64_t k) {
    for (int64_t t = k * N / pieces; t < (k + 1) * N / pieces; ++t) tokens.push_back(t);
  };
  switch (layout) {
    case Layout::contiguous: add_piece(n, c); break;
    case Layout::zigzag:
      add_piece(2 * n, c);
      add_piece(2 * n, 2 * n - 1 - c);
      break;
    case Layout::striped:
      for (int64_t t = c; t < N; t += n) tokens.push_back(t);
      break;
  }
  return tokens;
}

// The document index of every token.
std::vector<int64_t> document_index(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> doc;
  for (size_t d = 0; d < lengths.size(); ++d) doc.insert(doc.end(), static_cast<size_t>(lengths[d]), static_cast<int64_t>(d));
  return doc;
}

// The mask, pair by pair, from its definition.
bool attends(const Mask& mask, const std::vector<int64_t>& doc, int64_t q, int64_t k) {
  switch (mask.kind) {
    case MaskKind::full: return true;
    case MaskKind::causal: return k <= q;
    case MaskKind::sliding_window: return k <= q && q - k < mask.window_tokens;
    case MaskKind::documents: return k <= q && doc[static_cast<size_t>(q)] == doc[static_cast<size_t>(k)];
  }
  return false;
}

Problem problem_with(int64_t N, const Mask& mask) {
  Problem problem;
  problem.seq_len = N;
  problem.mask = mask;
  return problem;
}

Mask make_mask(MaskKind kind, int64_t window = 0, std::vector<int64_t> lengths = {}) {
  Mask mask;
  mask.kind = kind;
  mask.window_tokens = window;
  mask.document_lengths = std::move(lengths);
  return mask;
}

// Every mask worth trying for a sequence of N tokens.
std::vector<Mask> masks_for(int64_t N) {
  std::vector<Mask> masks = {make_mask(MaskKind::full), make_mask(MaskKind::causal)};
  for (int64_t w : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, N / 2, N - 1, N, N + 7})
    if (w >= 1) masks.push_back(make_mask(MaskKind::sliding_window, w));
  // One document; N tiny documents of one token; a mix of short and long ones.
  masks.push_back(make_mask(MaskKind::documents, 0, {N}));
  masks.push_back(make_mask(MaskKind::documents, 0, std::vector<int64_t>(static_cast<size_t>(N), 1)));
  std::vector<int64_t> mixed;
  int64_t left = N;
  for (int64_t length : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{1}, int64_t{13}, int64_t{3}, int64_t{30}}) {
    if (left <= length) break;
    mixed.push_back(length);
    left -= length;
  }
  mixed.push_back(left);
  masks.push_back(make_mask(MaskKind::documents, 0, mixed));
  // Alternating lengths 2 and 3 (and a remainder).
  std::vector<int64_t> alternating;
  left = N;
  for (int64_t length = 2; left > 0; length = 5 - length) {
    alternating.push_back(std::min(length, left));
    left -= alternating.back();
  }
  masks.push_back(make_mask(MaskKind::documents, 0, alternating));
  return masks;
}

std::string describe(const Mask& mask) {
  std::string text = to_string(mask.kind);
  if (mask.kind == MaskKind::sliding_window) text += " w=" + std::to_string(mask.window_tokens);
  if (mask.kind == MaskKind::documents) text += " docs=" + std::to_string(mask.document_lengths.size());
  return text;
}

int64_t row_sum(const BlockGrid& grid, int64_t i) {
  int64_t sum = 0;
  for (int64_t j = 0; j < grid.chunks(); ++j) sum += grid.pairs(i, j);
  return sum;
}

constexpr Layout kLayouts[] = {Layout::contiguous, Layout::zigzag, Layout::striped};

}  // namespace

// floor_sum(count, m, a, b) = sum_{i<count} floor((a i + b) / m): the library's O(log) reduction
// against the sum written out term by term, for many random small inputs.
TEST_CASE("floor_sum equals the direct sum for random small inputs", "[pair_count]") {
  std::mt19937_64 random(12345);
  auto uniform = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  for (int trial = 0; trial < 20000; ++trial) {
    int64_t count = uniform(0, 60), m = uniform(1, 40), a = uniform(0, 90), b = uniform(0, 90);
    __int128 direct = 0;
    for (int64_t i = 0; i < count; ++i) direct += (a * i + b) / m;
    INFO("count=" << count << " m=" << m << " a=" << a << " b=" << b);
    REQUIRE(floor_sum(count, m, a, b) == direct);
  }
}

// The same with large coefficients (terms near 2^50), where a naive closed form would overflow.
TEST_CASE("floor_sum equals the direct sum for large coefficients", "[pair_count]") {
  std::mt19937_64 random(777);
  auto uniform = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  for (int trial = 0; trial < 300; ++trial) {
    int64_t count = uniform(0, 2000), m = uniform(1, int64_t{1} << 40), a = uniform(0, int64_t{1} << 39),
            b = uniform(0, int64_t{1} << 45);
    __int128 direct = 0;
    for (int64_t i = 0; i < count; ++i) direct += (static_cast<__int128>(a) * i + b) / m;
    INFO("count=" << count << " m=" << m << " a=" << a << " b=" << b);
    REQUIRE(floor_sum(count, m, a, b) == direct);
  }
}

// #{(q, k) : k <= q - shift} over two arithmetic progressions, against a double loop, for
// random starts, strides, counts and shifts (negative shifts included).
TEST_CASE("count_keys_at_or_before equals a double loop over random progressions", "[pair_count]") {
  std::mt19937_64 random(99);
  auto uniform = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  for (int trial = 0; trial < 20000; ++trial) {
    TokenProgression queries{uniform(0, 60), uniform(1, 9), uniform(0, 25)};
    TokenProgression keys{uniform(0, 60), uniform(1, 9), uniform(0, 25)};
    int64_t shift = uniform(-40, 40);
    int64_t direct = 0;
    for (int64_t m = 0; m < queries.count; ++m)
      for (int64_t l = 0; l < keys.count; ++l)
        if (keys.start + l * keys.stride <= queries.start + m * queries.stride - shift) ++direct;
    INFO("queries " << queries.start << "+" << queries.stride << "x" << queries.count << ", keys " << keys.start << "+"
                    << keys.stride << "x" << keys.count << ", shift " << shift);
    REQUIRE(count_keys_at_or_before(queries, keys, shift) == direct);
  }
}

// Keys one token apart take a closed form (an arithmetic series); held against a loop over the
// queries counting each one's keys directly, at counts up to a million tokens.
TEST_CASE("count_keys_at_or_before with contiguous keys equals a count per query", "[pair_count]") {
  std::mt19937_64 random(7);
  auto uniform = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  for (int trial = 0; trial < 300; ++trial) {
    TokenProgression queries{uniform(0, 1 << 20), uniform(1, 3), uniform(0, 1 << 18)};
    TokenProgression keys{uniform(0, 1 << 20), 1, uniform(0, 1 << 20)};
    int64_t shift = uniform(-1000, 1000);
    int64_t direct = 0;
    for (int64_t m = 0; m < queries.count; ++m) {
      const int64_t last_key = queries.start + m * queries.stride - shift;  // keys at or before it
      direct += std::clamp<int64_t>(last_key - keys.start + 1, 0, keys.count);
    }
    INFO("queries " << queries.start << "+" << queries.stride << "x" << queries.count << ", keys " << keys.start << "x"
                    << keys.count << ", shift " << shift);
    REQUIRE(count_keys_at_or_before(queries, keys, shift) == direct);
  }
}

// Every block (i, j) of every layout, mask and chunk count against brute force over all N^2
// pairs: each pair is assigned to (owner(q), owner(k)) with owners from the layout definitions.
TEST_CASE("every block of the grid equals brute force over pairs", "[pair_count][block_grid]") {
  for (int64_t N : {1, 7, 31, 100, 101}) {
    for (const Mask& mask : masks_for(N)) {
      const std::vector<int64_t> doc = mask.kind == MaskKind::documents ? document_index(mask.document_lengths)
                                                                        : std::vector<int64_t>{};
      for (Layout layout : kLayouts) {
        for (int64_t n : {1, 2, 3, 4, 5, 7, 8}) {
          std::vector<int64_t> owner(static_cast<size_t>(N));
          for (int64_t t = 0; t < N; ++t) owner[static_cast<size_t>(t)] = owner_of(layout, N, n, t);
          std::vector<int64_t> expected(static_cast<size_t>(n * n), 0);
          int64_t expected_total = 0;
          for (int64_t q = 0; q < N; ++q)
            for (int64_t k = 0; k < N; ++k)
              if (attends(mask, doc, q, k)) {
                ++expected[static_cast<size_t>(owner[static_cast<size_t>(q)] * n + owner[static_cast<size_t>(k)])];
                ++expected_total;
              }
          BlockGrid grid(problem_with(N, mask), layout, n);
          INFO("N=" << N << " mask=" << describe(mask) << " layout=" << to_string(layout) << " n=" << n);
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              INFO("block (" << i << "," << j << ")");
              REQUIRE(grid.pairs(i, j) == expected[static_cast<size_t>(i * n + j)]);
              REQUIRE(grid.has_work(i, j) == (expected[static_cast<size_t>(i * n + j)] > 0));
            }
          }
          REQUIRE(grid.total_pairs() == expected_total);
        }
      }
    }
  }
}

// A hand-worked grid: N = 8, n = 2, causal.
//  contiguous {0..3}, {4..7}: (0,0) = 1+2+3+4 = 10, (0,1) = 0, (1,0) = 4*4 = 16, (1,1) = 10.
//  zigzag pieces of 2: chunk 0 = {0,1,6,7}, chunk 1 = {2,3,4,5}.
//    (0,0): q0:1 q1:2 q6:3 q7:4 -> 10; (0,1): q6,q7 see all 4 -> 8; (1,0): q2..q5 see 0,1 -> 8;
//    (1,1): 1+2+3+4 -> 10.
//  striped chunk 0 = {0,2,4,6}, chunk 1 = {1,3,5,7}.
//    (0,0): 1+2+3+4 = 10; (0,1): q0:0 q2:1 q4:2 q6:3 -> 6; (1,0): q1:1 q3:2 q5:3 q7:4 -> 10;
//    (1,1): 10.
TEST_CASE("hand-worked 8-token causal grids", "[block_grid]") {
  const Problem problem = problem_with(8, make_mask(MaskKind::causal));
  BlockGrid contiguous(problem, Layout::contiguous, 2), zigzag(problem, Layout::zigzag, 2),
      striped(problem, Layout::striped, 2);
  CHECK(contiguous.pairs(0, 0) == 10);
  CHECK(contiguous.pairs(0, 1) == 0);
  CHECK_FALSE(contiguous.has_work(0, 1));
  CHECK(contiguous.pairs(1, 0) == 16);
  CHECK(contiguous.pairs(1, 1) == 10);
  CHECK(zigzag.pairs(0, 0) == 10);
  CHECK(zigzag.pairs(0, 1) == 8);
  CHECK(zigzag.pairs(1, 0) == 8);
  CHECK(zigzag.pairs(1, 1) == 10);
  CHECK(striped.pairs(0, 0) == 10);
  CHECK(striped.pairs(0, 1) == 6);
  CHECK(striped.pairs(1, 0) == 10);
  CHECK(striped.pairs(1, 1) == 10);
  for (const BlockGrid* grid : {&contiguous, &zigzag, &striped}) CHECK(grid->total_pairs() == 8 * 9 / 2);
}

// Totals at scale, N not a multiple of P. Every query q sees
//  full: N keys -> N^2;  causal: q+1 keys -> N(N+1)/2;
//  sliding window w: min(q+1, w) keys -> w(w+1)/2 + (N-w)w for w <= N, else N(N+1)/2;
//  documents: a document of length L contributes L(L+1)/2.
// The layout only moves pairs between blocks, so the total is the same for every layout and P.
TEST_CASE("grid totals match closed forms at scale for every layout and P", "[block_grid]") {
  auto window_total = [](int64_t N, int64_t w) { return w >= N ? N * (N + 1) / 2 : w * (w + 1) / 2 + (N - w) * w; };
  for (int64_t N : {int64_t{1000003}, (int64_t{1} << 20) + 7}) {
    std::vector<int64_t> lengths = {1, 2, 3, 100000, 777, 1, 333333};
    int64_t used = 0;
    for (int64_t length : lengths) used += length;
    lengths.push_back(N - used);
    int64_t documents_total = 0;
    for (int64_t length : lengths) documents_total += length * (length + 1) / 2;

    struct Case {
      Mask mask;
      int64_t total;
    };
    std::vector<Case> cases = {
        {make_mask(MaskKind::full), N * N},
        {make_mask(MaskKind::causal), N * (N + 1) / 2},
        {make_mask(MaskKind::sliding_window, 1), N},
        {make_mask(MaskKind::sliding_window, 1000), window_total(N, 1000)},
        {make_mask(MaskKind::sliding_window, 4096), window_total(N, 4096)},
        {make_mask(MaskKind::sliding_window, N + 3), N * (N + 1) / 2},
        {make_mask(MaskKind::documents, 0, lengths), documents_total},
    };
    // Sanity of the window formula on its own: w = 1 gives N (each query sees itself only).
    REQUIRE(window_total(N, 1) == N);
    for (const auto& c : cases) {
      for (Layout layout : kLayouts) {
        for (int64_t P : {1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 64, 256}) {
          INFO("N=" << N << " mask=" << describe(c.mask) << " layout=" << to_string(layout) << " P=" << P);
          REQUIRE((P == 1 || N % P != 0));
          BlockGrid grid(problem_with(N, c.mask), layout, P);
          REQUIRE(grid.total_pairs() == c.total);
        }
      }
    }
  }
}

// Causal row sums (all keys of query chunk i) with N divisible by 2P, s = N/(2P), c = N/P.
// Row i = sum over its queries q of (q+1).
//  zigzag: pieces i and 2P-1-i; piece k contributes s*k*s + s(s+1)/2, so the row is
//          s^2 (2P-1) + s(s+1) = s(2Ps + 1) = N(N+1)/(2P), the same for every row.
//  striped: tokens i + tP, t < c: row = c(i+1) + P c(c-1)/2; rows differ by c per step, so
//          max - min = (P-1) c = (P-1) N/P exactly (less than N, while a row is ~N^2/(2P)).
//  contiguous: row = c*i*c + c(c+1)/2; row P-1 over row 0 is 1 + 2c(P-1)/(c+1), which is at
//          least P for c >= 1 (and tends to 2P-1).
// Hand check, N = 8, P = 2: zigzag rows 18 and 18 (0,1,6,7 -> 1+2+7+8; 2..5 -> 3+4+5+6);
// striped 16 and 20; contiguous 10 and 26.
TEST_CASE("causal row balance of zigzag, striped and contiguous layouts", "[block_grid]") {
  {
    const Problem problem = problem_with(8, make_mask(MaskKind::causal));
    BlockGrid zigzag(problem, Layout::zigzag, 2), striped(problem, Layout::striped, 2),
        contiguous(problem, Layout::contiguous, 2);
    CHECK(row_sum(zigzag, 0) == 18);
    CHECK(row_sum(zigzag, 1) == 18);
    CHECK(row_sum(striped, 0) == 16);
    CHECK(row_sum(striped, 1) == 20);
    CHECK(row_sum(contiguous, 0) == 10);
    CHECK(row_sum(contiguous, 1) == 26);
  }
  for (int64_t P : {1, 2, 3, 4, 5, 8, 12, 16, 64}) {
    for (int64_t s : {1, 2, 3, 1000, 4099}) {
      const int64_t N = 2 * P * s, c = N / P;
      const Problem problem = problem_with(N, make_mask(MaskKind::causal));
      BlockGrid zigzag(problem, Layout::zigzag, P), striped(problem, Layout::striped, P),
          contiguous(problem, Layout::contiguous, P);
      INFO("P=" << P << " N=" << N);
      int64_t striped_min = INT64_MAX, striped_max = INT64_MIN;
      for (int64_t i = 0; i < P; ++i) {
        REQUIRE(row_sum(zigzag, i) == N * (N + 1) / (2 * P));
        const int64_t striped_row = row_sum(striped, i);
        REQUIRE(striped_row == c * (i + 1) + P * c * (c - 1) / 2);
        striped_min = std::min(striped_min, striped_row);
        striped_max = std::max(striped_max, striped_row);
        REQUIRE(row_sum(contiguous, i) == c * i * c + c * (c + 1) / 2);
        if (i > 0) REQUIRE(striped_row - row_sum(striped, i - 1) == N / P);  // adjacent rows: exactly N/P
      }
      REQUIRE(striped_max - striped_min == (P - 1) * N / P);
      REQUIRE(striped_max - striped_min < N);
      // Contiguous: the last row does at least P times the work of the first.
      REQUIRE(row_sum(contiguous, P - 1) >= P * row_sum(contiguous, 0));
      if (P >= 2) REQUIRE(row_sum(contiguous, P - 1) > row_sum(contiguous, 0));
    }
  }
}

// A 4M-token sequence cut into 1024 chunks: one full row of 1024 blocks is closed form per
// block, so it returns at once. References:
//  causal contiguous, last row (c = 4096): c*1023*c + c(c+1)/2;
//  causal zigzag, any row: N(N+1)/2048;
//  other masks: the sum over the row's 4096 queries of the keys each one sees.
TEST_CASE("a full row of a 4M-token, 1024-chunk grid", "[block_grid][scale]") {
  const int64_t N = int64_t{4} * 1024 * 1024, n = 1024, c = N / n;
  {
    BlockGrid grid(problem_with(N, make_mask(MaskKind::causal)), Layout::contiguous, n);
    CHECK(row_sum(grid, n - 1) == c * (n - 1) * c + c * (c + 1) / 2);
    CHECK(row_sum(grid, 0) == c * (c + 1) / 2);
  }
  {
    BlockGrid grid(problem_with(N, make_mask(MaskKind::causal)), Layout::zigzag, n);
    CHECK(row_sum(grid, 0) == N * (N + 1) / (2 * n));
    CHECK(row_sum(grid, 777) == N * (N + 1) / (2 * n));
  }
  std::vector<int64_t> lengths;
  for (int64_t left = N, length = 1; left > 0; length = length * 3 % 100003 + 1) {
    lengths.push_back(std::min(length, left));
    left -= lengths.back();
  }
  std::vector<int64_t> starts = {0};
  for (int64_t length : lengths) starts.push_back(starts.back() + length);
  auto document_start = [&](int64_t q) { return *(std::upper_bound(starts.begin(), starts.end(), q) - 1); };
  const int64_t w = 12345;
  for (Layout layout : kLayouts) {
    for (int64_t row : {int64_t{0}, int64_t{513}, n - 1}) {
      INFO("layout=" << to_string(layout) << " row=" << row);
      const std::vector<int64_t> queries = reference_chunk(layout, N, n, row);
      int64_t window_expected = 0, documents_expected = 0;
      for (int64_t q : queries) {
        window_expected += std::min(q + 1, w);
        documents_expected += q - document_start(q) + 1;
      }
      BlockGrid window(problem_with(N, make_mask(MaskKind::sliding_window, w)), layout, n);
      CHECK(row_sum(window, row) == window_expected);
      BlockGrid documents(problem_with(N, make_mask(MaskKind::documents, 0, lengths)), layout, n);
      CHECK(row_sum(documents, row) == documents_expected);
      BlockGrid full(problem_with(N, make_mask(MaskKind::full)), layout, n);
      CHECK(row_sum(full, row) == static_cast<int64_t>(queries.size()) * N);
    }
  }
}

// FLOPs per head: forward QK^T (2d per pair) and PV (2 d_v per pair); backward recomputes QK^T
// and forms dV, dP (2 d_v each), dQ, dK (2d each): 2(3d + 2 d_v) per pair. With d_v = d:
// forward 4 d per pair (DESIGN.md §4: 4 Bq Bk d for a full block) and backward 2.5x forward.
TEST_CASE("attention FLOPs per head", "[problem]") {
  Problem problem;
  problem.head_dim = 128;
  problem.head_dim_v = 128;
  CHECK(forward_flops_per_head(problem, 1000.0) == 4.0 * 1000 * 128);
  CHECK(backward_flops_per_head(problem, 1000.0) == 2.5 * 4.0 * 1000 * 128);
  problem.head_dim = 64;
  problem.head_dim_v = 128;
  CHECK(forward_flops_per_head(problem, 10.0) == 2.0 * 10 * (64 + 128));         // 3840
  CHECK(backward_flops_per_head(problem, 10.0) == 2.0 * 10 * (3 * 64 + 2 * 128));  // 8960
  // A full block of Bq x Bk tokens: N = 12, n = 3 contiguous gives 4 x 4 blocks of 16 pairs.
  problem = Problem{};
  problem.seq_len = 12;
  problem.head_dim = problem.head_dim_v = 64;
  problem.mask.kind = MaskKind::full;
  BlockGrid grid(problem, Layout::contiguous, 3);
  CHECK(forward_flops_per_head(problem, static_cast<double>(grid.pairs(1, 2))) == 4.0 * 4 * 4 * 64);
}
