// Layouts (how tokens are dealt to chunks) and the problem's parsing and validation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/layout.hpp"
#include "tessera/core/problem.hpp"

using namespace tessera;

namespace {

std::vector<int64_t> expand(const TokenSet& set) {
  std::vector<int64_t> tokens;
  for (const auto& part : set.parts)
    for (int64_t m = 0; m < part.count; ++m) tokens.push_back(part.start + m * part.stride);
  return tokens;
}

constexpr Layout kLayouts[] = {Layout::contiguous, Layout::zigzag, Layout::striped};

}  // namespace

// For every layout, N and n (N divisible by n or not, n > N too): the chunks' token lists,
// expanded, cover every token of [0, N) exactly once, are increasing, and size() agrees with
// the expansion. Size spread: contiguous and striped cut N into n near-equal parts (spread
// <= 1); a zigzag chunk is two of 2n near-equal pieces (spread <= 2).
TEST_CASE("chunks partition the sequence exactly", "[layout]") {
  for (Layout layout : kLayouts) {
    for (int64_t N : {1, 2, 3, 7, 16, 31, 100, 101, 1000, 1023}) {
      for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 16, 33}) {
        INFO("layout=" << to_string(layout) << " N=" << N << " n=" << n);
        std::vector<int> seen(static_cast<size_t>(N), 0);
        int64_t smallest = INT64_MAX, largest = 0;
        for (int64_t c = 0; c < n; ++c) {
          const TokenSet set = chunk_tokens(layout, N, n, c);
          const std::vector<int64_t> tokens = expand(set);
          REQUIRE(set.size() == static_cast<int64_t>(tokens.size()));
          REQUIRE(std::is_sorted(tokens.begin(), tokens.end()));
          for (int64_t t : tokens) {
            REQUIRE(t >= 0);
            REQUIRE(t < N);
            ++seen[static_cast<size_t>(t)];
          }
          smallest = std::min(smallest, set.size());
          largest = std::max(largest, set.size());
        }
        for (int64_t t = 0; t < N; ++t) {
          INFO("token " << t);
          REQUIRE(seen[static_cast<size_t>(t)] == 1);
        }
        REQUIRE(largest - smallest <= (layout == Layout::zigzag ? 2 : 1));
        if (N % n == 0 && layout != Layout::zigzag) REQUIRE(largest == smallest);
        if (N % (2 * n) == 0) REQUIRE(largest == smallest);
      }
    }
  }
}

// Each layout's chunk matches its definition token by token:
//  contiguous chunk c = [floor(cN/n), floor((c+1)N/n));
//  zigzag chunk c = piece c followed by piece 2n-1-c of the 2n-way cut;
//  striped chunk c = {t : t mod n = c}.
TEST_CASE("chunks follow the layout definitions", "[layout]") {
  for (int64_t N : {5, 16, 31, 101, 1000}) {
    for (int64_t n : {1, 2, 3, 4, 7, 8}) {
      INFO("N=" << N << " n=" << n);
      for (int64_t c = 0; c < n; ++c) {
        std::vector<int64_t> contiguous, zigzag, striped;
        for (int64_t t = c * N / n; t < (c + 1) * N / n; ++t) contiguous.push_back(t);
        for (int64_t t = c * N / (2 * n); t < (c + 1) * N / (2 * n); ++t) zigzag.push_back(t);
        for (int64_t t = (2 * n - 1 - c) * N / (2 * n); t < (2 * n - c) * N / (2 * n); ++t) zigzag.push_back(t);
        for (int64_t t = c; t < N; t += n) striped.push_back(t);
        CHECK(expand(chunk_tokens(Layout::contiguous, N, n, c)) == contiguous);
        CHECK(expand(chunk_tokens(Layout::zigzag, N, n, c)) == zigzag);
        CHECK(expand(chunk_tokens(Layout::striped, N, n, c)) == striped);
      }
    }
  }
}

// Hand-worked, N = 10:
//  contiguous n = 3: bounds 0, 3, 6, 10 -> {0,1,2} {3,4,5} {6,7,8,9};
//  zigzag n = 2: four pieces with bounds 0, 2, 5, 7, 10; chunk 0 = pieces 0 and 3 =
//    {0,1,7,8,9}, chunk 1 = pieces 1 and 2 = {2,3,4,5,6};
//  striped n = 3: {0,3,6,9} {1,4,7} {2,5,8}.
TEST_CASE("hand-worked 10-token layouts", "[layout]") {
  using V = std::vector<int64_t>;
  CHECK(expand(chunk_tokens(Layout::contiguous, 10, 3, 0)) == V{0, 1, 2});
  CHECK(expand(chunk_tokens(Layout::contiguous, 10, 3, 1)) == V{3, 4, 5});
  CHECK(expand(chunk_tokens(Layout::contiguous, 10, 3, 2)) == V{6, 7, 8, 9});
  CHECK(expand(chunk_tokens(Layout::zigzag, 10, 2, 0)) == V{0, 1, 7, 8, 9});
  CHECK(expand(chunk_tokens(Layout::zigzag, 10, 2, 1)) == V{2, 3, 4, 5, 6});
  CHECK(expand(chunk_tokens(Layout::striped, 10, 3, 0)) == V{0, 3, 6, 9});
  CHECK(expand(chunk_tokens(Layout::striped, 10, 3, 1)) == V{1, 4, 7});
  CHECK(expand(chunk_tokens(Layout::striped, 10, 3, 2)) == V{2, 5, 8});
  // Zigzag chunk 0 is two progressions (pieces 0 and 3), striped one with stride n.
  const TokenSet zigzag = chunk_tokens(Layout::zigzag, 10, 2, 0);
  REQUIRE(zigzag.parts.size() == 2);
  CHECK(zigzag.parts[0].first() == 0);
  CHECK(zigzag.parts[0].last() == 1);
  CHECK(zigzag.parts[1].first() == 7);
  CHECK(zigzag.parts[1].last() == 9);
  const TokenSet striped = chunk_tokens(Layout::striped, 10, 3, 1);
  REQUIRE(striped.parts.size() == 1);
  CHECK(striped.parts[0].stride == 3);
  CHECK(striped.parts[0].last() == 7);
}

// Layouts at 4M tokens and 1024 chunks: sizes from the definitions (4096 each; zigzag pieces
// of 2048), with no token lists built.
TEST_CASE("layouts at scale", "[layout]") {
  const int64_t N = int64_t{4} << 20, n = 1024;
  for (Layout layout : kLayouts)
    for (int64_t c : {int64_t{0}, int64_t{1}, n - 1}) CHECK(chunk_tokens(layout, N, n, c).size() == 4096);
  const TokenSet zigzag = chunk_tokens(Layout::zigzag, N, n, 5);
  REQUIRE(zigzag.parts.size() == 2);
  CHECK(zigzag.parts[0].first() == 5 * 2048);
  CHECK(zigzag.parts[1].first() == (2 * n - 1 - 5) * 2048);
  CHECK(zigzag.parts[1].last() == (2 * n - 5) * 2048 - 1);
}

// Names round-trip; "cyclic" is an alias of striped; anything else is a UserError naming the
// accepted names.
TEST_CASE("parse_layout", "[layout]") {
  for (Layout layout : kLayouts) CHECK(parse_layout(to_string(layout)) == layout);
  CHECK(parse_layout("cyclic") == Layout::striped);
  for (const char* bad : {"", "Zigzag", "ring", "contiguous ", "stripe"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_AS(parse_layout(bad), UserError);
    CHECK_THROWS_WITH(parse_layout(bad), Catch::Contains("is not one of contiguous, zigzag, striped"));
  }
}

// Counts with binary suffixes: K = 2^10, M = 2^20, G = 2^30.
TEST_CASE("parse_count", "[problem]") {
  CHECK(parse_count("1M") == 1048576);
  CHECK(parse_count("128K") == 131072);
  CHECK(parse_count("1G") == 1073741824);
  CHECK(parse_count("4096") == 4096);
  CHECK(parse_count("3m") == 3 * 1048576);
  CHECK(parse_count("16k") == 16384);
  CHECK(parse_count("8G") == int64_t{8} << 30);
  CHECK(parse_count("0") == 0);
  for (const char* bad : {"", "abc", "1P", "1.5M", "-5", "K", "1MB", " 1M", "1M ", "0x10"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_AS(parse_count(bad), UserError);
  }
  // 2^63 - 1 = 9223372036854775807 fits; one more does not; 2^33 G = 2^63 does not either.
  CHECK(parse_count("9223372036854775807") == INT64_MAX);
  CHECK_THROWS_WITH(parse_count("9223372036854775808"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(parse_count("8589934592G"), Catch::Contains("too large"));
  CHECK(parse_count("8589934591G") == (int64_t{8589934591} << 30));
  CHECK(parse_count("1T") == int64_t{1} << 40);  // core/units.hpp: K, M, G, T
  CHECK_THROWS_WITH(parse_count("1P"), Catch::Contains("unknown suffix 'P'"));
}

// validate() names the first bad field.
TEST_CASE("Problem::validate", "[problem]") {
  Problem problem;  // defaults: 1M tokens, 32 heads over 8 KV heads, causal
  CHECK_NOTHROW(problem.validate());

  SECTION("heads not a multiple of kv-heads") {
    problem.heads = 12;
    problem.kv_heads = 8;
    CHECK_THROWS_AS(problem.validate(), UserError);
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("heads (12) must be a multiple of kv-heads (8)"));
  }
  SECTION("non-positive sizes") {
    problem.batch = 0;
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("batch must be positive, got 0"));
    problem.batch = 1;
    problem.head_dim = -1;
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("head-dim must be positive"));
    problem.head_dim = 64;
    problem.seq_len = 0;
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("sequence length must be positive"));
  }
  SECTION("window <= 0") {
    problem.mask.kind = MaskKind::sliding_window;
    problem.mask.window_tokens = 0;
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("positive window"));
    problem.mask.window_tokens = -5;
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("positive window"));
    problem.mask.window_tokens = 1;
    CHECK_NOTHROW(problem.validate());
  }
  SECTION("documents not summing to N") {
    problem.seq_len = 100;
    problem.mask.kind = MaskKind::documents;
    problem.mask.document_lengths = {30, 60};
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("document lengths sum to 90 but the sequence length is 100"));
    problem.mask.document_lengths = {30, 70};
    CHECK_NOTHROW(problem.validate());
    problem.mask.document_lengths = {30, 0, 70};
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("document 1 has length 0"));
    problem.mask.document_lengths.clear();
    CHECK_THROWS_WITH(problem.validate(), Catch::Contains("needs document lengths"));
  }
}

TEST_CASE("dtype, mask and pass names", "[problem]") {
  CHECK(bytes_per_element(parse_dtype("bf16")) == 2);
  CHECK(bytes_per_element(parse_dtype("fp16")) == 2);
  CHECK(bytes_per_element(parse_dtype("fp32")) == 4);
  CHECK_THROWS_WITH(parse_dtype("fp8"), Catch::Contains("dtype 'fp8'"));
  for (MaskKind kind : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents})
    CHECK(parse_mask_kind(to_string(kind)) == kind);
  CHECK_THROWS_AS(parse_mask_kind("banded"), UserError);
  for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) CHECK(parse_pass(to_string(pass)) == pass);
  CHECK_THROWS_AS(parse_pass("sideways"), UserError);
  Problem problem;
  problem.pass = Pass::forward;
  CHECK(problem.has_forward());
  CHECK_FALSE(problem.has_backward());
  problem.pass = Pass::both;
  CHECK((problem.has_forward() && problem.has_backward()));
}
