// The whole CUDA executor (backend/cuda/cuda_executor.cpp with its local transport, buffer
// packing, merges, gradient sums and downloads, and the real kernel launchers) running on the
// CPU emulation of the CUDA runtime, held to the criterion of the GPU suite: a distributed run's
// error against fp64 attention within 2x the same executor's single-device error. The
// emulation runs every stream's work at once in issue order, so what it cannot show is the
// streams' and events' ordering on a real device; everything the executor computes it does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/backend/calibration.hpp"
#include "tessera/backend/executor.hpp"
#include "tessera/core/error.hpp"
#include "tessera/costmodel/checker.hpp"
#include "tessera/costmodel/generators.hpp"

#include "common/executor_errors.hpp"

#include "mpi.h"

using namespace tessera;
using namespace tessera::backend;

namespace {

using Errors = testing::OutputErrors;
constexpr auto run = testing::run_against_reference;

Problem problem_of(MaskKind mask, int64_t seq_len, DType dtype) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = 4;
  problem.kv_heads = 2;
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.dtype = dtype;
  problem.pass = Pass::both;
  problem.mask.kind = mask;
  if (mask == MaskKind::documents) problem.mask.document_lengths = {40, 7, seq_len - 47};
  return problem;
}

}  // namespace

TEST_CASE("emulated CUDA executor: one device matches the CPU executor (fp32, simple kernels)", "[cuda-emulation]") {
  auto gpu = make_executor("cuda", {});
  auto cpu = make_executor("cpu", {});
  for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
    const Problem problem = problem_of(mask, 101, DType::fp32);
    const auto [inputs, reference] = testing::reference_case(problem, 3);
    const Errors on_gpu = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
    const Errors on_cpu = run(*cpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
    INFO(to_string(mask));
    CHECK(on_gpu.worst_ratio(on_cpu) <= 4);
    CHECK(on_gpu.out < 1e-5);
  }
}

TEST_CASE("emulated CUDA executor: virtual ranks run every generator correctly", "[cuda-emulation]") {
  // bf16 with d = 64: blocks go to the tensor-core kernels.
  auto gpu = make_executor("cuda", {});
  for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
    const Problem problem = problem_of(mask, 120, DType::bf16);
    const auto [inputs, reference] = testing::reference_case(problem, 4);
    const Errors single = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
    int runs = 0;
    for (const char* algorithm : {"ring", "mesh", "attention2d", "usp", "ulysses", "all-gather"})
      for (int32_t gpus : {4, 6, 9})
        for (Layout layout : {Layout::contiguous, Layout::zigzag}) {
          Errors errors;
          try {
            errors = run(*gpu, algorithm, problem, gpus, layout, inputs, reference);
          } catch (const UserError&) {
            continue;  // the generator does not apply to this shape
          }
          ++runs;
          INFO(algorithm << " P=" << gpus << " " << to_string(mask) << " " << to_string(layout));
          CHECK(errors.worst_ratio(single) <= 2);
        }
    CHECK(runs >= 25);
  }
}


TEST_CASE("emulated CUDA executor: NCCL transport, rank r on GPU r", "[cuda-emulation]") {
  // The emulated machine has 8 GPUs; NCCL point-to-point between them (emulated_nccl.cpp).
  ExecutorOptions options;
  options.transport = Transport::nccl;
  auto nccl = make_executor("cuda", options);
  auto local = make_executor("cuda", {});
  const Problem problem = problem_of(MaskKind::causal, 120, DType::bf16);
  const auto [inputs, reference] = testing::reference_case(problem, 5);
  const Errors single = run(*local, "ring", problem, 1, Layout::contiguous, inputs, reference);
  for (const char* algorithm : {"ring", "mesh", "usp"})
    for (int32_t gpus : {2, 4, 8}) {
      Errors errors;
      try {
        errors = run(*nccl, algorithm, problem, gpus, Layout::zigzag, inputs, reference);
      } catch (const UserError&) {
        continue;  // the generator does not apply to this shape
      }
      INFO(algorithm << " over NCCL, P=" << gpus);
      CHECK(errors.worst_ratio(single) <= 2);
      // A local run right after: its virtual ranks must live on the GPU the caller had current
      // (GPU 0), whichever GPU the NCCL run selected last.
      const Errors after = run(*local, "ring", problem, 4, Layout::zigzag, inputs, reference);
      CHECK(after.worst_ratio(single) <= 2);
    }
  // More ranks than GPUs is refused with the numbers.
  CHECK_THROWS_WITH(run(*nccl, "ring", problem, 9, Layout::zigzag, inputs, reference),
                    Catch::Contains("9 ranks but 8 GPUs are visible"));
}

TEST_CASE("emulated CUDA executor: calibration measures blocks and merges", "[cuda-emulation]") {
  // The CUDA path of `tessera calibrate`'s block and merge measurements (event-timed ops) runs
  // end to end; the emulated times mean nothing, but every figure must be measured (finite,
  // positive) and a block of 16 tiles must take longer than a block of one.
  auto gpu = make_executor("cuda", {});
  Problem shape = problem_of(MaskKind::full, 64, DType::bf16);
  shape.heads = shape.kv_heads = 1;
  const ComputeCalibration calibration = calibrate_compute(*gpu, shape, {32, 64, 256}, 1);
  REQUIRE(calibration.blocks.size() == 3);
  for (const BlockMeasurement& block : calibration.blocks) {
    CHECK(block.forward_s > 0);
    CHECK(block.backward_s > 0);
  }
  CHECK(calibration.blocks.back().forward_s > calibration.blocks.front().forward_s);
  CHECK(calibration.peak_flops_per_s > 0);
  CHECK(std::isfinite(calibration.peak_flops_per_s));
  CHECK(calibration.merge_bytes_per_s > 0);
  const nlohmann::json file = calibration_json(calibration, "emulated", shape);
  CHECK(file.at("device") == "emulated");
  CHECK(file.at("measured").at("blocks").size() == 3);
}

TEST_CASE("emulated CUDA executor: MPI transport, one process per GPU", "[cuda-emulation]") {
  // Processes are threads of one emulated machine (emulated_mpi.cpp); each drives its own rank
  // and GPU, issues its half of every transfer, and process 0 gathers the results.
  ExecutorOptions options;
  options.transport = Transport::mpi;
  auto local = make_executor("cuda", {});
  for (Pass pass : {Pass::both, Pass::backward}) {
    Problem problem = problem_of(MaskKind::causal, 120, DType::bf16);
    problem.pass = pass;
    const auto [inputs, reference] = testing::reference_case(problem, 6);
    const Errors single = run(*local, "ring", problem, 1, Layout::contiguous, inputs, reference);
    for (const char* algorithm : {"ring", "mesh"}) {
      constexpr int kProcesses = 4;
      std::vector<Errors> errors(kProcesses);
      std::vector<std::string> failures(kProcesses);
      tessera_emulation::run_mpi_processes(kProcesses, [&](int rank) {
        try {
          auto executor = make_executor("cuda", options);
          errors[static_cast<size_t>(rank)] = run(*executor, algorithm, problem, kProcesses, Layout::zigzag, inputs, reference);
        } catch (const std::exception& error) {
          failures[static_cast<size_t>(rank)] = error.what();
        }
      });
      INFO(algorithm << " over MPI, " << to_string(pass));
      for (const std::string& failure : failures) CHECK(failure == "");
      // Process 0 holds the gathered outputs. A backward run's O and LSE are the caller's inputs
      // (the reference itself), untouched: they must not be summed over the processes.
      CHECK(errors[0].worst_ratio(single) <= 2);
      if (pass == Pass::backward) {
        CHECK(errors[0].out == 0);
        CHECK(errors[0].lse == 0);
      }
    }
  }
}

