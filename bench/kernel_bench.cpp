// GPU attention kernel throughput beside a cuBLAS bf16 GEMM measured in the same run: the
// block kernels (the mma.sync ones by default for these shapes, and the older WMMA ones for
// comparison) on one block of N = 16K queries x 16K keys, 32 heads, d = 128, bf16, full and
// causal, forward and backward, launched directly on device buffers and timed with CUDA events
// (median of several runs after a warm-up). FLOPs count the work the mask leaves: 4 N^2 d H
// forward (half of it causal), 2.5x that backward. Targets (issue 19): forward >= 35 % and
// backward >= 25 % of the GEMM rate. Without a GPU it prints one line and exits 1.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "attention_kernels.hpp"
#include "bench_timing.hpp"

using namespace tessera;
using namespace tessera::backend::cuda;

namespace {

constexpr int64_t kTokens = 16 * 1024, kHeads = 32, kHeadDim = 128;
constexpr int kRepeats = 5;

[[noreturn]] void fail(const std::string& what) {
  std::printf("bench_gpu: %s\n", what.c_str());
  std::exit(1);
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

// Median seconds of `run` (one warm-up run first), timed with events on the default stream.
template <typename Run>
double median_seconds(Run run, int repeats = kRepeats) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  run();
  check(cudaDeviceSynchronize(), "warm-up run");
  std::vector<double> times;
  for (int repeat = 0; repeat < repeats; ++repeat) {
    check(cudaEventRecord(start), "cudaEventRecord");
    run();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "timed run");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return bench::median(times);
}

// Dense bf16 GEMM rate (bf16 in and out, fp32 accumulation), n x n x n.
double gemm_flops_per_s(int n) {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  const size_t bytes = static_cast<size_t>(n) * n * 2;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMalloc(&c, bytes), "cudaMalloc");
  check(cudaMemset(a, 0, bytes), "cudaMemset");
  check(cudaMemset(b, 0, bytes), "cudaMemset");
  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  const float alpha = 1, beta = 0;
  const double seconds = median_seconds([&] {
    check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &beta, c,
                       CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }, 10);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * n * n * static_cast<double>(n) / seconds;
}

// A device buffer of `count` bf16 values, normal(0, 1), tiled from one host block of random values.
void* random_bf16(int64_t count, unsigned seed) {
  constexpr int64_t kBlock = 1 << 20;
  std::vector<uint16_t> host(kBlock);
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (uint16_t& bits : host) {
    const float value = normal(random);
    uint32_t wide;
    std::memcpy(&wide, &value, sizeof wide);
    bits = static_cast<uint16_t>((wide + 0x7fffu + ((wide >> 16) & 1u)) >> 16);
  }
  void* device = nullptr;
  check(cudaMalloc(&device, static_cast<size_t>(count) * 2), "cudaMalloc");
  for (int64_t at = 0; at < count; at += kBlock) {
    const int64_t piece = std::min(kBlock, count - at);
    check(cudaMemcpy(static_cast<uint16_t*>(device) + at, host.data(), static_cast<size_t>(piece) * 2, cudaMemcpyHostToDevice),
          "cudaMemcpy");
  }
  return device;
}

struct Buffers {
  void *q = nullptr, *kv = nullptr, *d_out = nullptr;
  float *out = nullptr, *stats = nullptr, *d_q = nullptr, *d_kv = nullptr;
  int64_t* tokens = nullptr;
};

Buffers make_buffers() {
  const int64_t values = kTokens * kHeads * kHeadDim, row_heads = kTokens * kHeads;
  Buffers b;
  b.q = random_bf16(values, 1);
  b.kv = random_bf16(2 * values, 2);
  b.d_out = random_bf16(values, 3);
  check(cudaMalloc(reinterpret_cast<void**>(&b.out), static_cast<size_t>(values + row_heads) * 4), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&b.stats), static_cast<size_t>(2 * row_heads) * 4), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&b.d_q), static_cast<size_t>(values) * 4), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&b.d_kv), static_cast<size_t>(2 * values) * 4), "cudaMalloc");
  std::vector<int64_t> tokens(static_cast<size_t>(kTokens));
  for (int64_t i = 0; i < kTokens; ++i) tokens[static_cast<size_t>(i)] = i;
  check(cudaMalloc(reinterpret_cast<void**>(&b.tokens), static_cast<size_t>(kTokens) * 8), "cudaMalloc");
  check(cudaMemcpy(b.tokens, tokens.data(), static_cast<size_t>(kTokens) * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
  return b;
}

BlockShape block_shape() {
  BlockShape shape;
  shape.q_rows = shape.kv_rows = static_cast<int32_t>(kTokens);
  shape.heads = shape.kv_heads = static_cast<int32_t>(kHeads);
  shape.head_dim = shape.head_dim_v = static_cast<int32_t>(kHeadDim);
  shape.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  return shape;
}

struct Rates {
  double forward_s = 0, backward_s = 0;
};

// Forward (into a fresh accumulator: O = 0, LSE = -inf) and backward (from that forward's LSE;
// delta = 0, which changes no instruction the kernel runs) of the whole block.
Rates time_kernels(const Buffers& b, int mask_kind) {
  const int64_t values = kTokens * kHeads * kHeadDim, row_heads = kTokens * kHeads;
  ForwardArgs forward;
  forward.shape = block_shape();
  forward.mask.kind = mask_kind;
  forward.element = ElementType::bf16;
  forward.q = b.q;
  forward.kv = b.kv;
  forward.q_tokens = forward.kv_tokens = b.tokens;
  forward.out = b.out;
  Rates rates;
  rates.forward_s = median_seconds([&] {
    check(launch_fill(b.out, 0.0f, values, nullptr), "fill");
    check(launch_fill(b.out + values, -INFINITY, row_heads, nullptr), "fill");
    check(launch_forward_block(forward, nullptr), "forward kernel");
  });
  check(cudaMemcpy(b.stats, b.out + values, static_cast<size_t>(row_heads) * 4, cudaMemcpyDeviceToDevice), "cudaMemcpy");
  check(cudaMemset(b.stats + row_heads, 0, static_cast<size_t>(row_heads) * 4), "cudaMemset");
  BackwardArgs backward;
  backward.shape = block_shape();
  backward.mask.kind = mask_kind;
  backward.element = ElementType::bf16;
  backward.q = b.q;
  backward.kv = b.kv;
  backward.d_out = b.d_out;
  backward.stats = b.stats;
  backward.q_tokens = backward.kv_tokens = b.tokens;
  backward.d_q = b.d_q;
  backward.d_kv = b.d_kv;
  rates.backward_s = median_seconds([&] {
    check(cudaMemsetAsync(b.d_q, 0, static_cast<size_t>(values) * 4, nullptr), "cudaMemsetAsync");
    check(cudaMemsetAsync(b.d_kv, 0, static_cast<size_t>(2 * values) * 4, nullptr), "cudaMemsetAsync");
    check(launch_backward_block(backward, nullptr), "backward kernel");
  });
  return rates;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("bench_gpu: not run: no CUDA GPU (%s)\n", status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 1;
  }
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  std::printf("GPU 0: %s\n", properties.name);
  const double gemm = gemm_flops_per_s(8192);
  std::printf("cuBLAS bf16 GEMM 8192^3 (fp32 accumulation): %.1f TFLOP/s (median of 10)\n", gemm / 1e12);
  const Buffers buffers = make_buffers();
  std::printf("attention block N = %lld, d = %lld, %lld heads, bf16 (fill and zeroing of the outputs included):\n",
              static_cast<long long>(kTokens), static_cast<long long>(kHeadDim), static_cast<long long>(kHeads));
  const double full_flops = 4.0 * kTokens * kTokens * kHeadDim * kHeads;
  struct Variant {
    const char* name;
    const char* force;  // environment variable forcing it, or nullptr for the default (mma.sync)
  };
  for (const Variant variant : {Variant{"mma.sync", nullptr}, Variant{"WMMA (previous)", "TESSERA_WMMA_KERNELS"}}) {
    if (variant.force != nullptr) setenv(variant.force, "1", 1);
    for (const int mask : {0, 1}) {
      const double forward_flops = mask == 0 ? full_flops : full_flops / 2;
      const Rates rates = time_kernels(buffers, mask);
      const double forward_rate = forward_flops / rates.forward_s, backward_rate = 2.5 * forward_flops / rates.backward_s;
      std::printf("  %-16s %-6s forward : %8.3f ms %7.1f TFLOP/s %5.1f %% of the GEMM rate (target >= 35 %%)\n", variant.name,
                  mask == 0 ? "full" : "causal", rates.forward_s * 1e3, forward_rate / 1e12, 100 * forward_rate / gemm);
      std::printf("  %-16s %-6s backward: %8.3f ms %7.1f TFLOP/s %5.1f %% of the GEMM rate (target >= 25 %%)\n", variant.name,
                  mask == 0 ? "full" : "causal", rates.backward_s * 1e3, backward_rate / 1e12, 100 * backward_rate / gemm);
    }
    if (variant.force != nullptr) unsetenv(variant.force);
  }
  return 0;
}
