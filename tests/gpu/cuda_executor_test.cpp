// The CUDA executor on a real GPU: its kernels against the fp64 reference and the CPU executor,
// and virtual-rank (and, with several GPUs, NCCL) execution of distributed schedules. The same
// criterion as the CPU suite: a distributed run's error within 2x a single-device run's error at
// the same precision on the same device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "tessera/backend/executor.hpp"
#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

#include "common/executor_errors.hpp"

using namespace tessera;
using namespace tessera::backend;

namespace {

using Errors = OutputErrors;
constexpr auto run = testing::run_against_reference;

// Forces the simple kernels while alive, and only then, even when a REQUIRE throws.
struct SimpleKernelsForced {
  SimpleKernelsForced() { setenv("TESSERA_SIMPLE_KERNELS", "1", 1); }
  ~SimpleKernelsForced() { unsetenv("TESSERA_SIMPLE_KERNELS"); }
  SimpleKernelsForced(const SimpleKernelsForced&) = delete;
  SimpleKernelsForced& operator=(const SimpleKernelsForced&) = delete;
};

// Forces the older WMMA tensor-core kernels (instead of the mma.sync ones) while alive.
struct WmmaKernelsForced {
  WmmaKernelsForced() { setenv("TESSERA_WMMA_KERNELS", "1", 1); }
  ~WmmaKernelsForced() { unsetenv("TESSERA_WMMA_KERNELS"); }
  WmmaKernelsForced(const WmmaKernelsForced&) = delete;
  WmmaKernelsForced& operator=(const WmmaKernelsForced&) = delete;
};

Problem problem_of(MaskKind mask, int64_t seq_len, DType dtype) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = 8;
  problem.kv_heads = 2;
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.dtype = dtype;
  problem.pass = Pass::both;
  problem.mask.kind = mask;
  if (mask == MaskKind::sliding_window) problem.mask.window_tokens = 100;
  if (mask == MaskKind::documents) problem.mask.document_lengths = {300, 17, seq_len - 317};
  return problem;
}

}  // namespace

TEST_CASE("GPU kernels match the fp64 reference as closely as the CPU executor does", "[gpu]") {
  // The simple kernels compute in fp32 like the CPU executor; the tensor-core forward rounds P
  // to 16 bits and is checked against the reference in its own test below.
  const SimpleKernelsForced simple_kernels;
  auto gpu = make_executor("cuda", {});
  auto cpu = make_executor("cpu", {});
  for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
    for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents}) {
      Problem problem = problem_of(mask, 1021, dtype);
      const auto [inputs, reference] = reference_case(problem, 3);
      const Errors on_gpu = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
      const Errors on_cpu = run(*cpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
      INFO(to_string(dtype) << " " << to_string(mask));
      // Both compute in fp32 from the same rounded inputs; fast-math exponentials differ in the
      // last bits, hence the margin.
      CHECK(worst_error_ratio(on_gpu, on_cpu) <= 4);
      CHECK(on_gpu.out < 1e-3);
    }
}

TEST_CASE("virtual ranks on one GPU: ring and mesh for P = 4 ... 16", "[gpu]") {
  auto gpu = make_executor("cuda", {});
  for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
    Problem problem = problem_of(mask, 2000, DType::bf16);
    const auto [inputs, reference] = reference_case(problem, 4);
    const Errors single = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
    for (const char* algorithm : {"ring", "mesh", "attention2d", "usp"})
      for (int32_t gpus : {4, 6, 8, 9, 16})
        for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped}) {
          Errors errors;
          try {
            errors = run(*gpu, algorithm, problem, gpus, layout, inputs, reference);
          } catch (const UserError&) {
            continue;  // the generator does not apply to this shape
          }
          INFO(algorithm << " P=" << gpus << " " << to_string(mask) << " " << to_string(layout));
          CHECK(numerics_verdict(problem, errors, single).passed);
        }
  }
}

TEST_CASE("NCCL transport: one rank per GPU", "[gpu][nccl]") {
  ExecutorOptions options;
  options.transport = Transport::nccl;
  auto gpu = make_executor("cuda", options);
  auto local = make_executor("cuda", {});
  Problem problem = problem_of(MaskKind::causal, 1024, DType::bf16);
  const auto [inputs, reference] = reference_case(problem, 5);
  const Errors single = run(*local, "ring", problem, 1, Layout::contiguous, inputs, reference);
  for (int32_t gpus : {2, 4, 8}) {
    Errors errors;
    try {
      errors = run(*gpu, "ring", problem, gpus, Layout::zigzag, inputs, reference);
    } catch (const BackendUnavailable& error) {
      WARN("not run at P=" << gpus << ": " << error.what());
      continue;
    }
    INFO("ring over NCCL, P=" << gpus);
    CHECK(numerics_verdict(problem, errors, single).passed);
  }
}

TEST_CASE("tensor-core (mma.sync and WMMA) and simple forward kernels agree with the reference", "[gpu]") {
  auto gpu = make_executor("cuda", {});
  for (int64_t head_dim : {64, 128})
    for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
      Problem problem = problem_of(mask, 1021, DType::bf16);
      problem.head_dim = problem.head_dim_v = head_dim;
      problem.pass = Pass::forward;
      const auto [inputs, reference] = reference_case(problem, 6);
      const Errors simple = [&] {
        const SimpleKernelsForced simple_kernels;
        return run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
      }();
      const Errors wmma = [&] {
        const WmmaKernelsForced wmma_kernels;
        return run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
      }();
      const Errors tensor_cores = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);  // mma.sync
      const Errors distributed = run(*gpu, "mesh", problem, 8, Layout::zigzag, inputs, reference);
      INFO("d=" << head_dim << " " << to_string(mask));
      // The tensor-core kernels round P to bf16 before P V (as FlashAttention does): their error
      // may exceed the fp32-P simple kernel's, but stays at bf16's scale.
      CHECK(tensor_cores.out < 2e-2);
      CHECK(wmma.out < 2e-2);
      CHECK(simple.out < 1e-3);
      CHECK(distributed.out <= kErrorRatioLimit * std::max(tensor_cores.out, kSingleDeviceErrorFloor));
    }
}

TEST_CASE("tensor-core (mma.sync and WMMA) and simple backward kernels agree with the reference", "[gpu]") {
  auto gpu = make_executor("cuda", {});
  auto largest = [](const std::vector<double>& values) {
    double most = 0;
    for (double value : values) most = std::max(most, std::abs(value));
    return most;
  };
  for (int64_t head_dim : {64, 128})
    for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents}) {
      Problem problem = problem_of(mask, 1021, DType::bf16);
      problem.head_dim = problem.head_dim_v = head_dim;
      const auto [inputs, reference] = reference_case(problem, 7);
      const Errors simple = [&] {
        const SimpleKernelsForced simple_kernels;
        return run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
      }();
      const Errors wmma = [&] {
        const WmmaKernelsForced wmma_kernels;
        return run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
      }();
      const Errors tensor_cores = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);  // mma.sync
      const Errors distributed = run(*gpu, "mesh", problem, 8, Layout::zigzag, inputs, reference);
      INFO("d=" << head_dim << " " << to_string(mask));
      CHECK(wmma.d_q <= 2e-2 * largest(reference.d_q));
      CHECK(wmma.d_v <= 2e-2 * largest(reference.d_v));
      // P and dS are rounded to bf16 before their products (as in FlashAttention): the error is
      // at bf16's scale relative to the gradient's size, while the fp32 simple kernel stays
      // near fp32's.
      CHECK(tensor_cores.d_q <= 2e-2 * largest(reference.d_q));
      CHECK(tensor_cores.d_k <= 2e-2 * largest(reference.d_k));
      CHECK(tensor_cores.d_v <= 2e-2 * largest(reference.d_v));
      CHECK(simple.d_v <= 1e-4 * largest(reference.d_v));
      CHECK(numerics_verdict(problem, distributed, tensor_cores).passed);
    }
}
