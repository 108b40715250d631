// GPU block attention throughput: one 4096 x 4096 block, d = 128, bf16, forward and backward,
// as a fraction of the GPU's measured dense bf16 matrix-multiply rate (cuBLAS). Prints figures;
// without a GPU it says so and exits 0 (a benchmark never fails on the machine it runs on).
#include <cstdio>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "bench_timing.hpp"
#include "tessera/backend/executor.hpp"
#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

// Dense bf16 GEMM rate (fp32 accumulation), n x n x n, median of several runs.
double matmul_flops_per_s(int n) {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  const size_t bytes = static_cast<size_t>(n) * n * 2;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&c, bytes);
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float alpha = 1, beta = 0;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> times;
  for (int repeat = 0; repeat < 7; ++repeat) {
    cudaEventRecord(start);
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &beta, c,
                 CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (repeat > 0) times.push_back(ms * 1e-3);
  }
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * n * n * static_cast<double>(n) / bench::median(times);
}

// Median compute-op time of one full block on the CUDA executor.
double block_seconds(backend::ScheduleExecutor& executor, Pass pass, int64_t side, int64_t heads) {
  Problem problem;
  problem.seq_len = side;
  problem.heads = heads;
  problem.kv_heads = heads;
  problem.head_dim = problem.head_dim_v = 128;
  problem.dtype = DType::bf16;
  problem.mask.kind = MaskKind::full;
  problem.pass = pass;
  GeneratorOptions options;
  options.gpus = 1;
  const CheckedSchedule checked = generate_checked("ring", problem, options);
  const Schedule& schedule = checked.schedule();
  backend::require_ready(executor.can_run(checked));
  backend::AttentionTensors inputs = backend::random_inputs(schedule.problem, 1);
  inputs.out.assign(inputs.d_out.size(), 0);
  inputs.lse.assign(static_cast<size_t>(side * heads), 0);
  std::vector<double> times;
  for (int repeat = 0; repeat < 4; ++repeat) {
    backend::AttentionTensors tensors = inputs;
    backend::ExecutionRecord record;
    executor.execute(checked, tensors, record);
    for (size_t index = 0; index < schedule.ops.size(); ++index)
      if (schedule.ops[index].kind == OpKind::compute && repeat > 0)
        times.push_back(record.op_finish_s[index] - record.op_start_s[index]);
  }
  return bench::median(times);
}

}  // namespace

int main() {
  std::unique_ptr<backend::ScheduleExecutor> executor;
  try {
    executor = backend::make_executor("cuda", {});
  } catch (const backend::BackendUnavailable& error) {
    std::printf("kernel bench: not run: %s\n", error.what());
    return 0;
  }
  const double matmul = matmul_flops_per_s(8192);
  std::printf("dense bf16 GEMM 8192^3 (cuBLAS): %.1f TFLOP/s (median of 6)\n", matmul / 1e12);
  const int64_t side = 4096, heads = 1;
  const double forward_flops = 4.0 * side * side * 128 * heads;
  const double forward_s = block_seconds(*executor, Pass::forward, side, heads);
  const double backward_s = block_seconds(*executor, Pass::backward, side, heads);
  std::printf("block 4096 x 4096, d = 128, bf16, %lld head(s):\n", static_cast<long long>(heads));
  std::printf("  forward : %8.3f ms  %7.1f TFLOP/s  %5.1f %% of the GEMM rate\n", forward_s * 1e3,
              forward_flops / forward_s / 1e12, 100 * forward_flops / forward_s / matmul);
  std::printf("  backward: %8.3f ms  %7.1f TFLOP/s  %5.1f %% of the GEMM rate (2.5x forward FLOPs)\n", backward_s * 1e3,
              2.5 * forward_flops / backward_s / 1e12, 100 * 2.5 * forward_flops / backward_s / matmul);
  return 0;
}
