// The CUDA block kernels' own source, run on the CPU by the emulator, against attention computed
// here in fp64. One query chunk meets four key blocks (before, across, touching and after its diagonal),
// so the kernels' LSE merges, gradient sums, tile skipping and every mask are exercised, with
// GQA (three query heads per KV head, a head group that is not aligned with them) and row counts
// that are not multiples of the 64-row tiles; a longer block makes the mma kernels' cp.async
// rings wrap around.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "attention_kernels.hpp"
#include "cuda_runtime_api.h"

using namespace tessera::backend::cuda;

namespace {

// The head group holds query heads 2-5 of a problem with 3 query heads per KV head, so its
// heads use KV heads 0, 1, 1, 1: a group not aligned with the KV heads (as Ulysses makes them).
constexpr int kHeads = 4, kKvHeads = 2, kHeadsPerKv = 3;
constexpr int kFirstHead = 2, kFirstKvHead = 0;
// Where the query chunk and the key blocks lie (first token, rows).
struct Layout {
  int q_rows = 0;
  int64_t first_query = 0;
  std::vector<std::pair<int64_t, int>> key_blocks;
  int64_t tokens = 0;
};
// 70 queries (100-169); key blocks all before them; across them; starting at the last query (so
// a tile whose first key equals the last query must not be skipped); all after.
const Layout kFourBlocks = {70, 100, {{0, 90}, {90, 79}, {169, 71}, {240, 60}}, 300};
// Long enough for the mma kernels' cp.async rings to wrap around (5 key tiles of 64 at d = 64,
// 10 of 32 at d = 128 forward; 7 query tiles of 32 backward), with causal skipping inside one block.
const Layout kLongBlock = {200, 100, {{0, 300}}, 300};
// Past 32 tiles, where the mma kernels decide skipping and masking 32 tiles at a time
// (mma_tiles.cuh). Forward: 40 queries (2100-2139) over 2200 keys, 69 key tiles of 32 at d = 128
// (35 of 64 at d = 64); causally the last visible one, tile 66 (33), cuts the diagonal and tiles
// 67-68 (34) are skipped, in the third (second) window.
const Layout kManyKeyTiles = {40, 2100, {{0, 2200}}, 2200};
// Backward: one CTA's 64 keys (1100-1163) walk 38 query tiles of 32 (1200 queries); causally
// tiles 0-33 are skipped, across the first window into the second, and tile 34 cuts the diagonal.
// (Keys 0-31 give every query a key: a query that sees none has no LSE to compare.)
const Layout kManyQueryTiles = {1200, 0, {{0, 32}, {1100, 64}}, 1200};

float widen(float value) { return value; }
float widen(__nv_bfloat16 value) { return __bfloat162float(value); }
float widen(__half value) { return __half2float(value); }
template <typename T>
T narrow(float value) {
  if constexpr (std::is_same_v<T, float>) return value;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(value);
  else return __float2half_rn(value);
}

struct MaskCase {
  std::string name;
  int kind;
  int64_t window = 0;
};

bool allows(const MaskCase& mask, const std::vector<int32_t>& document, int64_t query, int64_t key) {
  switch (mask.kind) {
    case 0: return true;
    case 1: return key <= query;
    case 2: return key <= query && query - key < mask.window;
    default: return key <= query && document[static_cast<size_t>(key)] == document[static_cast<size_t>(query)];
  }
}

// Inputs in the element type T, laid out as the executor lays out one chunk's buffers.
template <typename T>
struct Inputs {
  int d = 0;
  std::vector<T> q, d_out;            // [rows][kHeads][d]
  std::vector<std::vector<T>> kv;     // per key block: K [rows][kKvHeads][d] then V
  std::vector<int64_t> q_tokens;
  std::vector<std::vector<int64_t>> kv_tokens;
};

template <typename T>
Inputs<T> make_inputs(const Layout& layout, int d, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Inputs<T> in;
  in.d = d;
  auto fill = [&](std::vector<T>& values, size_t count) {
    values.resize(count);
    for (T& value : values) value = narrow<T>(normal(random));
  };
  fill(in.q, static_cast<size_t>(layout.q_rows * kHeads * d));
  fill(in.d_out, static_cast<size_t>(layout.q_rows * kHeads * d));
  for (int r = 0; r < layout.q_rows; ++r) in.q_tokens.push_back(layout.first_query + r);
  for (auto [first, rows] : layout.key_blocks) {
    in.kv.emplace_back();
    fill(in.kv.back(), static_cast<size_t>(2 * rows * kKvHeads * d));
    in.kv_tokens.emplace_back();
    for (int r = 0; r < rows; ++r) in.kv_tokens.back().push_back(first + r);
  }
  return in;
}

struct Reference {
  std::vector<double> out, lse, delta, d_q;     // [rows][kHeads](...)
  std::vector<std::vector<double>> d_k, d_v;   // per key block [rows][kKvHeads][d]
};

template <typename T>
Reference reference(const Layout& layout, const Inputs<T>& in, const MaskCase& mask, const std::vector<int32_t>& document) {
  const int d = in.d;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Reference ref;
  ref.out.assign(static_cast<size_t>(layout.q_rows * kHeads * d), 0);
  ref.lse.assign(static_cast<size_t>(layout.q_rows * kHeads), 0);
  ref.delta = ref.lse;
  ref.d_q = ref.out;
  for (size_t b = 0; b < layout.key_blocks.size(); ++b) {
    ref.d_k.emplace_back(static_cast<size_t>(layout.key_blocks[b].second * kKvHeads * d), 0.0);
    ref.d_v.push_back(ref.d_k.back());
  }
  auto key_at = [&](size_t b, int row, int g, int e) {
    return static_cast<double>(widen(in.kv[b][static_cast<size_t>((row * kKvHeads + g) * d + e)]));
  };
  auto value_at = [&](size_t b, int row, int g, int e) {
    const int rows = layout.key_blocks[b].second;
    return static_cast<double>(widen(in.kv[b][static_cast<size_t>(rows * kKvHeads * d + (row * kKvHeads + g) * d + e)]));
  };
  for (int r = 0; r < layout.q_rows; ++r)
    for (int h = 0; h < kHeads; ++h) {
      const int g = (kFirstHead + h) / kHeadsPerKv - kFirstKvHead;
      const size_t rh = static_cast<size_t>(r * kHeads + h);
      auto q_at = [&](int e) { return static_cast<double>(widen(in.q[rh * static_cast<size_t>(d) + static_cast<size_t>(e)])); };
      auto g_at = [&](int e) { return static_cast<double>(widen(in.d_out[rh * static_cast<size_t>(d) + static_cast<size_t>(e)])); };
      struct Pair { size_t block; int row; double score; };
      std::vector<Pair> pairs;
      double most = -std::numeric_limits<double>::infinity();
      for (size_t b = 0; b < layout.key_blocks.size(); ++b)
        for (int k = 0; k < layout.key_blocks[b].second; ++k) {
          if (!allows(mask, document, in.q_tokens[static_cast<size_t>(r)], in.kv_tokens[b][static_cast<size_t>(k)])) continue;
          double dot = 0;
          for (int e = 0; e < d; ++e) dot += q_at(e) * key_at(b, k, g, e);
          pairs.push_back({b, k, dot * scale});
          most = std::max(most, dot * scale);
        }
      double sum = 0;
      for (const Pair& pair : pairs) sum += std::exp(pair.score - most);
      const double lse = most + std::log(sum);
      ref.lse[rh] = lse;
      for (const Pair& pair : pairs)
        for (int e = 0; e < d; ++e) ref.out[rh * static_cast<size_t>(d) + static_cast<size_t>(e)] += std::exp(pair.score - lse) * value_at(pair.block, pair.row, g, e);
      double delta = 0;
      for (int e = 0; e < d; ++e) delta += g_at(e) * ref.out[rh * static_cast<size_t>(d) + static_cast<size_t>(e)];
      ref.delta[rh] = delta;
      for (const Pair& pair : pairs) {
        const double p = std::exp(pair.score - lse);
        double dp = 0;
        for (int e = 0; e < d; ++e) dp += g_at(e) * value_at(pair.block, pair.row, g, e);
        const double ds = p * (dp - delta) * scale;
        for (int e = 0; e < d; ++e) {
          const size_t kv_at = static_cast<size_t>((pair.row * kKvHeads + g) * d + e);
          ref.d_q[rh * static_cast<size_t>(d) + static_cast<size_t>(e)] += ds * key_at(pair.block, pair.row, g, e);
          ref.d_k[pair.block][kv_at] += ds * q_at(e);
          ref.d_v[pair.block][kv_at] += p * g_at(e);
        }
      }
    }
  return ref;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& want, size_t count) {
  double worst = 0, largest = 0;
  for (size_t i = 0; i < count; ++i) {
    const double error = std::abs(static_cast<double>(got[i]) - want[i]);
    if (std::isnan(error)) return std::numeric_limits<double>::infinity();  // std::max would skip it
    worst = std::max(worst, error);
    largest = std::max(largest, std::abs(want[i]));
  }
  return worst / std::max(largest, 1e-30);
}

// Which kernels the launchers pick: the simple ones or the WMMA ones (forced the way the GPU
// tests force them) or, by default for bf16/fp16 with d = 64 or 128, the mma ones.
enum class Kernels { simple, tensor_cores, mma };

struct KernelChoice {
  explicit KernelChoice(Kernels kernels) {
    if (kernels == Kernels::simple) setenv("TESSERA_SIMPLE_KERNELS", "1", 1);
    if (kernels == Kernels::tensor_cores) setenv("TESSERA_WMMA_KERNELS", "1", 1);
  }
  ~KernelChoice() {
    unsetenv("TESSERA_SIMPLE_KERNELS");
    unsetenv("TESSERA_WMMA_KERNELS");
  }
  KernelChoice(const KernelChoice&) = delete;
  KernelChoice& operator=(const KernelChoice&) = delete;
};

struct Errors {
  double out = 0, lse = 0, d_q = 0, d_k = 0, d_v = 0;
};

template <typename T>
Errors run_kernels(Kernels kernels, ElementType element, int d, const MaskCase& mask, const Layout& layout = kFourBlocks) {
  const KernelChoice choice(kernels);
  const Inputs<T> in = make_inputs<T>(layout, d, 11);
  std::vector<int32_t> document(static_cast<size_t>(layout.tokens));
  for (int64_t token = 0; token < layout.tokens; ++token) document[static_cast<size_t>(token)] = token < 50 ? 0 : token < 130 ? 1 : 2;
  const Reference ref = reference(layout, in, mask, document);

  BlockShape shape;
  shape.q_rows = layout.q_rows;
  shape.heads = kHeads;
  shape.kv_heads = kKvHeads;
  shape.head_dim = shape.head_dim_v = d;
  shape.first_head = kFirstHead;
  shape.first_kv_head = kFirstKvHead;
  shape.heads_per_kv = kHeadsPerKv;
  shape.scale = 1.0f / std::sqrt(static_cast<float>(d));
  MaskArgs mask_args;
  mask_args.kind = mask.kind;
  mask_args.window_tokens = mask.window;
  mask_args.document_of_token = document.data();

  // Forward: O accumulator (O then LSE) starts at O = 0, LSE = -inf; every key block merges in.
  const size_t row_heads = static_cast<size_t>(layout.q_rows * kHeads);
  std::vector<float> out(row_heads * static_cast<size_t>(d), 0.0f);
  out.resize(out.size() + row_heads, -std::numeric_limits<float>::infinity());
  for (size_t b = 0; b < layout.key_blocks.size(); ++b) {
    ForwardArgs args;
    args.shape = shape;
    args.shape.kv_rows = layout.key_blocks[b].second;
    args.mask = mask_args;
    args.element = element;
    args.q = in.q.data();
    args.kv = in.kv[b].data();
    args.q_tokens = in.q_tokens.data();
    args.kv_tokens = in.kv_tokens[b].data();
    args.out = out.data();
    REQUIRE(launch_forward_block(args, nullptr) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  }
  Errors errors;
  errors.out = relative_error(out, ref.out, ref.out.size());
  const std::vector<float> lse(out.begin() + static_cast<std::ptrdiff_t>(ref.out.size()), out.end());
  errors.lse = relative_error(lse, ref.lse, row_heads);

  // Backward from the fp64 LSE and delta (the stats the executor hands every block).
  std::vector<float> stats(2 * row_heads);
  for (size_t i = 0; i < row_heads; ++i) {
    stats[i] = static_cast<float>(ref.lse[i]);
    stats[row_heads + i] = static_cast<float>(ref.delta[i]);
  }
  std::vector<float> d_q(row_heads * static_cast<size_t>(d), 0.0f);
  for (size_t b = 0; b < layout.key_blocks.size(); ++b) {
    const size_t kv_values = static_cast<size_t>(layout.key_blocks[b].second * kKvHeads * d);
    std::vector<float> d_kv(2 * kv_values, 0.0f);
    BackwardArgs args;
    args.shape = shape;
    args.shape.kv_rows = layout.key_blocks[b].second;
    args.mask = mask_args;
    args.element = element;
    args.q = in.q.data();
    args.kv = in.kv[b].data();
    args.d_out = in.d_out.data();
    args.stats = stats.data();
    args.q_tokens = in.q_tokens.data();
    args.kv_tokens = in.kv_tokens[b].data();
    args.d_q = d_q.data();
    args.d_kv = d_kv.data();
    REQUIRE(launch_backward_block(args, nullptr) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const std::vector<float> d_v(d_kv.begin() + static_cast<std::ptrdiff_t>(kv_values), d_kv.end());
    // A block the mask hides entirely (the last, under causal masks) must add exactly nothing.
    const bool hidden = std::all_of(ref.d_k[b].begin(), ref.d_k[b].end(), [](double v) { return v == 0; });
    if (hidden) {
      CHECK(*std::max_element(d_kv.begin(), d_kv.end()) == 0.0f);
      CHECK(*std::min_element(d_kv.begin(), d_kv.end()) == 0.0f);
      continue;
    }
    errors.d_k = std::max(errors.d_k, relative_error(d_kv, ref.d_k[b], kv_values));
    errors.d_v = std::max(errors.d_v, relative_error(d_v, ref.d_v[b], kv_values));
  }
  errors.d_q = relative_error(d_q, ref.d_q, ref.d_q.size());
  return errors;
}

const std::vector<MaskCase> kMasks = {{"full", 0}, {"causal", 1}, {"sliding window", 2, 40}, {"documents", 3}};

}  // namespace

TEST_CASE("emulated simple kernels match fp64 attention (fp32 arithmetic)", "[cuda-emulation]") {
  const Kernels simple = Kernels::simple;
  // (Warp shuffles make these the slowest to emulate: every mask once, the other shapes causal.)
  auto check = [](const Errors& e) {
    CHECK(e.out < 1e-5);
    CHECK(e.lse < 1e-5);
    CHECK(e.d_q < 1e-4);
    CHECK(e.d_k < 1e-4);
    CHECK(e.d_v < 1e-4);
  };
  for (const MaskCase& mask : kMasks) {
    INFO("fp32, d=64, " << mask.name);
    check(run_kernels<float>(simple, ElementType::fp32, 64, mask));
  }
  {
    INFO("fp32, d=40 (not a multiple of the warp), causal");
    check(run_kernels<float>(simple, ElementType::fp32, 40, kMasks[1]));
  }
  {
    INFO("bf16 inputs, d=64, causal");
    check(run_kernels<__nv_bfloat16>(simple, ElementType::bf16, 64, kMasks[1]));
  }
}

TEST_CASE("emulated tensor-core kernels match fp64 attention at 16-bit precision", "[cuda-emulation]") {
  // P (and dS) are rounded to 16 bits before their products, so the error is at the element
  // type's scale: bf16 keeps 8 significant bits (relative step 2^-8 = 0.39 %), fp16 11. The
  // bounds are 1.5-2x that step (errors seen: 0.1-0.3 % of each output's largest value).
  const Kernels tensor_cores = Kernels::tensor_cores;
  auto check = [](const Errors& e, double output_bound, double gradient_bound) {
    CHECK(e.out < output_bound);
    CHECK(e.lse < 1e-5);  // the row sums stay in fp32
    CHECK(e.d_q < gradient_bound);
    CHECK(e.d_k < gradient_bound);
    CHECK(e.d_v < output_bound);
  };
  for (const MaskCase& mask : kMasks) {
    INFO("bf16, d=64, " << mask.name);
    check(run_kernels<__nv_bfloat16>(tensor_cores, ElementType::bf16, 64, mask), 6e-3, 8e-3);
  }
  {
    INFO("bf16, d=128, causal");
    check(run_kernels<__nv_bfloat16>(tensor_cores, ElementType::bf16, 128, kMasks[1]), 6e-3, 8e-3);
  }
  {
    INFO("fp16, d=64, causal");
    check(run_kernels<__half>(tensor_cores, ElementType::fp16, 64, kMasks[1]), 1e-3, 1e-3);
  }
}

namespace {
// The tensor-core bounds (see above): the output and dV within `output_bound` of their largest
// value, dQ and dK within `gradient_bound`, the LSE within 1e-5.
bool within(const Errors& e, double output_bound, double gradient_bound) {
  return e.out < output_bound && e.lse < 1e-5 && e.d_q < gradient_bound && e.d_k < gradient_bound && e.d_v < output_bound;
}
void report(const Errors& e) {
  UNSCOPED_INFO("errors: out " << e.out << ", lse " << e.lse << ", dq " << e.d_q << ", dk " << e.d_k << ", dv " << e.d_v);
}
}  // namespace

TEST_CASE("emulated mma kernels (mma.sync, ldmatrix, cp.async) match fp64 attention at 16-bit precision",
          "[cuda-emulation][mma]") {
  // The executor's default for these shapes. Same bounds as the WMMA kernels: P and dS are
  // rounded to 16 bits before their products.
  const Kernels mma = Kernels::mma;
  for (const int d : {64, 128})
    for (const MaskCase& mask : {kMasks[0], kMasks[1]}) {
      if (d == 128 && mask.kind == 1) {
        INFO("fp16, d=128, causal (bf16: the next test case)");
      } else {
        INFO("bf16, d=" << d << ", " << mask.name);
        const Errors bf16 = run_kernels<__nv_bfloat16>(mma, ElementType::bf16, d, mask);
        report(bf16);
        CHECK(within(bf16, 6e-3, 8e-3));
      }
      INFO("fp16, d=" << d << ", " << mask.name);
      const Errors fp16 = run_kernels<__half>(mma, ElementType::fp16, d, mask);
      report(fp16);
      CHECK(within(fp16, 1e-3, 1e-3));
    }
  for (const MaskCase& mask : {kMasks[2], kMasks[3]}) {
    INFO("bf16, d=64, " << mask.name);
    const Errors e = run_kernels<__nv_bfloat16>(mma, ElementType::bf16, 64, mask);
    report(e);
    CHECK(within(e, 6e-3, 8e-3));
  }
}

// One case of the above on its own, for the CI's sanitizer build (which runs a subset of the
// emulation suite): the largest tiles, partial tiles, skipping and masks.
TEST_CASE("emulated mma kernels at bf16 d=128 causal", "[cuda-emulation][mma]") {
  const Errors e = run_kernels<__nv_bfloat16>(Kernels::mma, ElementType::bf16, 128, kMasks[1]);
  report(e);
  CHECK(within(e, 6e-3, 8e-3));
}

TEST_CASE("emulated mma kernels on a block long enough for their cp.async rings to wrap around", "[cuda-emulation][mma]") {
  const Kernels mma = Kernels::mma;
  for (const MaskCase& mask : {kMasks[0], kMasks[1]}) {
    INFO("bf16, d=64, " << mask.name);
    const Errors d64 = run_kernels<__nv_bfloat16>(mma, ElementType::bf16, 64, mask, kLongBlock);
    report(d64);
    CHECK(within(d64, 6e-3, 8e-3));
    INFO("fp16, d=128, " << mask.name);
    const Errors d128 = run_kernels<__half>(mma, ElementType::fp16, 128, mask, kLongBlock);
    report(d128);
    CHECK(within(d128, 1e-3, 1e-3));
  }
}

TEST_CASE("emulated mma kernels past 32 tiles: skipping and masks decided a window of 32 tiles at a time",
          "[cuda-emulation][mma]") {
  // (The sliding window on the many query tiles would leave queries 72-1099 without a key.)
  const std::vector<std::pair<const Layout*, std::vector<MaskCase>>> cases = {
      {&kManyKeyTiles, {kMasks[0], kMasks[1], kMasks[2]}}, {&kManyQueryTiles, {kMasks[0], kMasks[1]}}};
  for (const auto& [layout_of_case, masks] : cases)
    for (const MaskCase& mask : masks) {
      const Layout& layout = *layout_of_case;
      INFO((layout_of_case == &kManyKeyTiles ? "many key tiles" : "many query tiles") << ", " << mask.name);
      INFO("bf16, d=64");
      const Errors d64 = run_kernels<__nv_bfloat16>(Kernels::mma, ElementType::bf16, 64, mask, layout);
      report(d64);
      CHECK(within(d64, 6e-3, 8e-3));
      INFO("fp16, d=128");
      const Errors d128 = run_kernels<__half>(Kernels::mma, ElementType::fp16, 128, mask, layout);
      report(d128);
      CHECK(within(d128, 1e-3, 1e-3));
    }
}

TEST_CASE("a wrong fragment index or an early cp.async read makes the mma kernels fail (mutations)",
          "[cuda-emulation][mma][mutation]") {
  // The kernels pass unmutated (above); each mutation of the emulated layouts (listed in
  // emulated_warp_matrix.cpp) must push some output past the bounds.
  for (int mutation = 1; mutation <= 8; ++mutation) {
    INFO("mutation " << mutation);
    tessera_emulation::fragment_mutation = mutation;
    const Errors e = run_kernels<__nv_bfloat16>(Kernels::mma, ElementType::bf16, 64, kMasks[1]);
    tessera_emulation::fragment_mutation = 0;
    report(e);
    CHECK_FALSE(within(e, 6e-3, 8e-3));
  }
}

TEST_CASE("emulated merge kernel combines partial outputs by their LSE", "[cuda-emulation]") {
  // Row-heads: both partials present; only `into` empty (LSE = -inf); only `from` empty; both
  // empty. 300 of them so that the launch has two blocks, one partly idle.
  constexpr int64_t kRowHeads = 300;
  constexpr int32_t kDv = 3;
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> into(kRowHeads * (kDv + 1)), from(kRowHeads * (kDv + 1));
  float* into_lse = into.data() + kRowHeads * kDv;
  float* from_lse = from.data() + kRowHeads * kDv;
  for (int64_t i = 0; i < kRowHeads; ++i) {
    for (int32_t e = 0; e < kDv; ++e) {
      into[static_cast<size_t>(i * kDv + e)] = static_cast<float>(i % 7) - 3.0f + 0.5f * static_cast<float>(e);
      from[static_cast<size_t>(i * kDv + e)] = static_cast<float>(e) - 0.25f * static_cast<float>(i % 5);
    }
    into_lse[i] = i % 4 == 1 || i % 4 == 3 ? -inf : 0.1f * static_cast<float>(i % 11);
    from_lse[i] = i % 4 == 2 || i % 4 == 3 ? -inf : -0.3f * static_cast<float>(i % 13);
  }
  const std::vector<float> before = into;
  REQUIRE(launch_merge_outputs(into.data(), from.data(), kRowHeads, kDv, nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  double worst = 0;
  for (int64_t i = 0; i < kRowHeads; ++i) {
    const double a = before[static_cast<size_t>(kRowHeads * kDv + i)], b = from_lse[i];
    // Softmax over the union of both key sets: weights e^a and e^b, LSE log(e^a + e^b).
    const double merged = a == -inf ? b : b == -inf ? a : std::log(std::exp(a) + std::exp(b));
    const double wa = a == -inf ? 0 : std::exp(a - merged), wb = b == -inf ? 0 : std::exp(b - merged);
    if (a == -inf && b == -inf) {
      CHECK(into_lse[i] == -inf);
    } else {
      worst = std::max(worst, std::isnan(into_lse[i]) ? kInfinity : std::abs(into_lse[i] - merged));
    }
    for (int32_t e = 0; e < kDv; ++e) {
      const size_t at = static_cast<size_t>(i * kDv + e);
      const double want = a == -inf && b == -inf ? before[at] : wa * before[at] + wb * from[at];
      worst = std::max(worst, std::isnan(into[at]) ? kInfinity : std::abs(into[at] - want));
    }
  }
  CHECK(worst < 1e-5);
}
