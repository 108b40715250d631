// The emulated mma.sync m16n8k16 and ldmatrix fragments (emulated_warp_matrix.cpp, used through
// backend/cuda/warp_mma.cuh as the kernels use them) against the PTX ISA's fragment tables,
// worked by hand for a few lanes, and against a plain matrix product; cp.async groups land only
// when waited for. The mutation cases break one fragment index at a time and require these
// checks to fail, so that they are shown to catch such a mistake.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_runtime_api.h"
#include "warp_mma.cuh"

using namespace tessera::backend::cuda;

namespace {

template <typename T>
T narrow(float value) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(value);
  else return __float2half_rn(value);
}
float widen(__nv_bfloat16 value) { return __bfloat162float(value); }
float widen(__half value) { return __half2float(value); }
template <typename T>
float element(uint32_t word, int which) {
  const uint16_t bits = static_cast<uint16_t>(which == 0 ? word & 0xffffu : word >> 16);
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return widen(__nv_bfloat16{bits});
  } else {
    __half value;
    std::memcpy(&value.value, &bits, sizeof bits);
    return widen(value);
  }
}

// Runs `body(lane)` as one warp (a block of 32 threads) with `shared_bytes` of shared memory.
template <typename Body>
void run_warp(size_t shared_bytes, Body body) {
  tessera_emulation::launch(dim3(1), dim3(32), shared_bytes, [&] { body(static_cast<int>(threadIdx.x % 32)); });
}

// A 16 x 16 bf16 matrix M[r][c] = 16 r + c (exact in bf16) in shared memory, read by one
// ldmatrix.x4 (non-transposed and transposed) with the kernels' addressing. Returns whether
// lanes 5 (group 1, thread 1) and 30 (group 7, thread 2) got the elements the ISA tables give.
bool ldmatrix_gives_isa_elements() {
  uint32_t a_regs[32][4] = {}, t_regs[32][4] = {}, b_regs[32][2] = {};
  run_warp(16 * 16 * 2, [&](int lane) {
    auto* m = reinterpret_cast<__nv_bfloat16*>(tessera_emulation::dynamic_shared_memory());
    for (int i = lane; i < 256; i += 32) m[i] = narrow<__nv_bfloat16>(static_cast<float>(i));
    __syncwarp();
    // A operand (rows, columns of M), as the kernels load Q.
    ldmatrix_x4<false>(a_regs[lane], m + (lane % 8 + (lane / 8 % 2) * 8) * 16 + lane / 16 * 8);
    // B operand, .trans (M stored [k][n], as V): the kernels' addressing.
    ldmatrix_x4<true>(t_regs[lane], m + (lane % 8 + (lane / 8 % 2) * 8) * 16 + lane / 16 * 8);
    // B operand from M stored [n][k] (as K), .x2: rows n = lane % 8, columns k = 8 (lane / 8).
    ldmatrix_x2<false>(b_regs[lane], m + (lane % 8) * 16 + (lane / 8 % 2) * 8);
  });
  auto is = [](uint32_t word, float low, float high) {
    return element<__nv_bfloat16>(word, 0) == low && element<__nv_bfloat16>(word, 1) == high;
  };
  bool ok = true;
  // Lane 5: A a0 = (1,2),(1,3); a1 = (9,2),(9,3); a2 = (1,10),(1,11); a3 = (9,10),(9,11).
  ok = ok && is(a_regs[5][0], 18, 19) && is(a_regs[5][1], 146, 147) && is(a_regs[5][2], 26, 27) && is(a_regs[5][3], 154, 155);
  // Lane 30: a0 = (7,4),(7,5); a1 = (15,4),(15,5); a2 = (7,12),(7,13); a3 = (15,12),(15,13).
  ok = ok && is(a_regs[30][0], 116, 117) && is(a_regs[30][1], 244, 245) && is(a_regs[30][2], 124, 125) && is(a_regs[30][3], 252, 253);
  // Transposed, lane 5: b0 of n-tile 0 = B(k=2,n=1), B(3,1) = M[2][1], M[3][1]; b1 = M[10][1], M[11][1];
  // the second n-tile (columns 8-15): M[2][9], M[3][9] and M[10][9], M[11][9].
  ok = ok && is(t_regs[5][0], 33, 49) && is(t_regs[5][1], 161, 177) && is(t_regs[5][2], 41, 57) && is(t_regs[5][3], 169, 185);
  // Non-transposed B from [n][k], lane 30: b0 = B(k=4,n=7), B(5,7) = M[7][4], M[7][5]; b1 = M[7][12], M[7][13].
  ok = ok && is(b_regs[30][0], 116, 117) && is(b_regs[30][1], 124, 125);
  return ok;
}

// mma.sync with fragments filled by hand from the ISA tables (no ldmatrix): A = I (16 x 16
// identity), B[k][n] = 8 k + n (exact), C = 0.5: D = C + B, each lane's d[i] at (row
// g + 8 (i / 2), column 2t + i % 2). Returns whether every lane got it.
bool mma_gives_isa_elements() {
  bool ok = true;
  float d_all[32][4] = {};
  run_warp(0, [&](int lane) {
    const int g = lane / 4, t = lane % 4;
    auto a_value = [&](int row, int col) { return row == col ? 1.0f : 0.0f; };
    auto b_value = [&](int k, int n) { return static_cast<float>(8 * k + n); };
    uint32_t a[4], b[2];
    a[0] = pack_pair<__nv_bfloat16>(a_value(g, 2 * t), a_value(g, 2 * t + 1));
    a[1] = pack_pair<__nv_bfloat16>(a_value(g + 8, 2 * t), a_value(g + 8, 2 * t + 1));
    a[2] = pack_pair<__nv_bfloat16>(a_value(g, 2 * t + 8), a_value(g, 2 * t + 9));
    a[3] = pack_pair<__nv_bfloat16>(a_value(g + 8, 2 * t + 8), a_value(g + 8, 2 * t + 9));
    b[0] = pack_pair<__nv_bfloat16>(b_value(2 * t, g), b_value(2 * t + 1, g));
    b[1] = pack_pair<__nv_bfloat16>(b_value(2 * t + 8, g), b_value(2 * t + 9, g));
    float d[4] = {0.5f, 0.5f, 0.5f, 0.5f};  // C: d = C + A B
    mma_m16n8k16<__nv_bfloat16>(d, a, b);
    for (int i = 0; i < 4; ++i) d_all[lane][i] = d[i];
  });
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const int row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
      ok = ok && d_all[lane][i] == 0.5f + static_cast<float>(8 * row + col);
    }
  // A not the identity: row 3 of A = e_5 + 2 e_12, so D row 3 = B row 5 + 2 B row 12 (lane 12, g = 3).
  run_warp(0, [&](int lane) {
    const int g = lane / 4, t = lane % 4;
    auto a_value = [&](int row, int col) { return row == 3 ? (col == 5 ? 1.0f : col == 12 ? 2.0f : 0.0f) : 0.0f; };
    auto b_value = [&](int k, int n) { return static_cast<float>(8 * k + n); };
    uint32_t a[4] = {pack_pair<__nv_bfloat16>(a_value(g, 2 * t), a_value(g, 2 * t + 1)),
                     pack_pair<__nv_bfloat16>(a_value(g + 8, 2 * t), a_value(g + 8, 2 * t + 1)),
                     pack_pair<__nv_bfloat16>(a_value(g, 2 * t + 8), a_value(g, 2 * t + 9)),
                     pack_pair<__nv_bfloat16>(a_value(g + 8, 2 * t + 8), a_value(g + 8, 2 * t + 9))};
    uint32_t b[2] = {pack_pair<__nv_bfloat16>(b_value(2 * t, g), b_value(2 * t + 1, g)),
                     pack_pair<__nv_bfloat16>(b_value(2 * t + 8, g), b_value(2 * t + 9, g))};
    float d[4] = {0, 0, 0, 0};
    mma_m16n8k16<__nv_bfloat16>(d, a, b);
    for (int i = 0; i < 4; ++i) d_all[lane][i] = d[i];
  });
  for (int lane = 12; lane < 16; ++lane)  // group 3: row 3 (elements 0, 1)
    for (int i = 0; i < 2; ++i) {
      const int col = 2 * (lane % 4) + i;
      ok = ok && d_all[lane][i] == static_cast<float>(8 * 5 + col) + 2.0f * static_cast<float>(8 * 12 + col);
    }
  return ok;
}

// C (16 x 16) = A (16 x 32) B (32 x 16) through ldmatrix and mma as the kernels do it, B read
// three ways: stored [n][k] with ldmatrix.x4, stored [n][k] with .x1 per register, and stored
// [k][n] with ldmatrix.x4.trans. Returns the largest error against fp64, relative to the largest |C|.
template <typename T>
double product_error() {
  constexpr int M = 16, N = 16, K = 32;
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<T> a(M * K), b_nk(N * K), b_kn(K * N);
  for (T& value : a) value = narrow<T>(normal(random));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) b_kn[k * N + n] = b_nk[n * K + k] = narrow<T>(normal(random));
  std::vector<double> want(M * N, 0.0);
  double largest = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      for (int k = 0; k < K; ++k) want[m * N + n] += static_cast<double>(widen(a[m * K + k])) * widen(b_nk[n * K + k]);
      largest = std::max(largest, std::abs(want[m * N + n]));
    }
  std::vector<float> got[3];
  for (auto& c : got) c.assign(M * N, 0.0f);
  // Rows padded by 8 elements, as in the kernels.
  constexpr int kA = K + 8, kNk = K + 8, kKn = N + 8;
  run_warp((M * kA + N * kNk + K * kKn) * sizeof(T), [&](int lane) {
    T* sa = reinterpret_cast<T*>(tessera_emulation::dynamic_shared_memory());
    T* snk = sa + M * kA;
    T* skn = snk + N * kNk;
    for (int i = lane; i < M * K; i += 32) sa[i / K * kA + i % K] = a[i];
    for (int i = lane; i < N * K; i += 32) snk[i / K * kNk + i % K] = b_nk[i];
    for (int i = lane; i < K * N; i += 32) skn[i / N * kKn + i % N] = b_kn[i];
    __syncwarp();
    const int g = lane / 4, t = lane % 4;
    float c[3][N / 8][4] = {};
    for (int k = 0; k < K / 16; ++k) {
      uint32_t af[4];
      ldmatrix_x4<false>(af, sa + (lane % 8 + (lane / 8 % 2) * 8) * kA + k * 16 + lane / 16 * 8);
      uint32_t b[4];
      ldmatrix_x4<false>(b, snk + (lane / 16 * 8 + lane % 8) * kNk + k * 16 + (lane / 8 % 2) * 8);
      const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
      mma_m16n8k16<T>(c[0][0], af, b0);
      mma_m16n8k16<T>(c[0][1], af, b1);
      for (int n = 0; n < N / 8; ++n) {
        uint32_t lo[1], hi[1];
        ldmatrix_x1<false>(lo, snk + (n * 8 + lane % 8) * kNk + k * 16);
        ldmatrix_x1<false>(hi, snk + (n * 8 + lane % 8) * kNk + k * 16 + 8);
        const uint32_t bx[2] = {lo[0], hi[0]};
        mma_m16n8k16<T>(c[1][n], af, bx);
      }
      ldmatrix_x4<true>(b, skn + (k * 16 + lane % 8 + (lane / 8 % 2) * 8) * kKn + lane / 16 * 8);
      const uint32_t t0[2] = {b[0], b[1]}, t1[2] = {b[2], b[3]};
      mma_m16n8k16<T>(c[2][0], af, t0);
      mma_m16n8k16<T>(c[2][1], af, t1);
    }
    for (int way = 0; way < 3; ++way)
      for (int n = 0; n < N / 8; ++n)
        for (int i = 0; i < 4; ++i) got[way][(g + 8 * (i / 2)) * N + n * 8 + 2 * t + i % 2] = c[way][n][i];
  });
  double worst = 0;
  for (const auto& c : got)
    for (int i = 0; i < M * N; ++i) worst = std::max(worst, std::abs(c[i] - want[i]));
  return worst / largest;
}

// cp.async: nothing lands before a wait covers its group; wait_group(1) completes all but the
// newest group; a copy of an invalid row writes zeros.
bool cp_async_groups_behave() {
  bool ok = true;
  alignas(16) static unsigned char source[2][16];
  for (int i = 0; i < 16; ++i) source[0][i] = static_cast<unsigned char>(i + 1), source[1][i] = static_cast<unsigned char>(100 + i);
  run_warp(64, [&](int lane) {
    unsigned char* shared = tessera_emulation::dynamic_shared_memory();
    if (lane == 0) {
      std::memset(shared, 0xee, 48);
      cp_async_16(shared, source[0], true);
      cp_async_commit();
      cp_async_16(shared + 16, source[1], true);
      cp_async_16(shared + 32, nullptr, false);
      cp_async_commit();
      ok = ok && shared[0] == 0xee && shared[16] == 0xee && shared[32] == 0xee;  // in flight
      cp_async_wait<1>();
      ok = ok && shared[0] == 1 && shared[15] == 16 && shared[16] == 0xee && shared[32] == 0xee;
      cp_async_wait<0>();
      ok = ok && shared[16] == 100 && shared[31] == 115 && shared[32] == 0 && shared[47] == 0;
    }
  });
  return ok;
}

struct MutationScope {
  explicit MutationScope(int mutation) { tessera_emulation::fragment_mutation = mutation; }
  ~MutationScope() { tessera_emulation::fragment_mutation = 0; }
};

}  // namespace

TEST_CASE("emulated ldmatrix and mma.sync fragments hold the elements of the PTX ISA tables", "[cuda-emulation][fragments]") {
  CHECK(ldmatrix_gives_isa_elements());
  CHECK(mma_gives_isa_elements());
}

TEST_CASE("emulated ldmatrix + mma.sync m16n8k16 compute a plain matrix product", "[cuda-emulation][fragments]") {
  // Products of 16-bit values are exact in fp32; only the fp32 sums of 32 terms round.
  CHECK(product_error<__nv_bfloat16>() < 1e-6);
  CHECK(product_error<__half>() < 1e-6);
}

TEST_CASE("emulated cp.async copies land when a wait_group covers them", "[cuda-emulation][fragments]") {
  CHECK(cp_async_groups_behave());
}

TEST_CASE("a wrong fragment index makes the fragment checks fail (mutations)", "[cuda-emulation][fragments][mutation]") {
  REQUIRE(ldmatrix_gives_isa_elements());
  REQUIRE(mma_gives_isa_elements());
  REQUIRE(product_error<__nv_bfloat16>() < 1e-6);
  REQUIRE(cp_async_groups_behave());
  for (int mutation = 1; mutation <= 8; ++mutation) {
    INFO("mutation " << mutation << " (listed in emulated_warp_matrix.cpp)");
    const MutationScope scope(mutation);
    const bool caught = !ldmatrix_gives_isa_elements() || !mma_gives_isa_elements() || !(product_error<__nv_bfloat16>() < 1e-6) ||
                        !cp_async_groups_behave();
    CHECK(caught);
  }
}
