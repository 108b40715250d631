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
#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

#include "common/executor_errors.hpp"

#include "cuda_runtime_api.h"
#include "mpi.h"

using namespace tessera;
using namespace tessera::backend;

namespace {

using Errors = OutputErrors;
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
    const auto [inputs, reference] = reference_case(problem, 3);
    const Errors on_gpu = run(*gpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
    const Errors on_cpu = run(*cpu, "ring", problem, 1, Layout::contiguous, inputs, reference);
    INFO(to_string(mask));
    CHECK(worst_error_ratio(on_gpu, on_cpu) <= 4);
    CHECK(on_gpu.out < 1e-5);
  }
}

TEST_CASE("emulated CUDA executor: virtual ranks run every generator correctly", "[cuda-emulation]") {
  // bf16 with d = 64: blocks go to the tensor-core kernels.
  auto gpu = make_executor("cuda", {});
  for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::documents}) {
    const Problem problem = problem_of(mask, 120, DType::bf16);
    const auto [inputs, reference] = reference_case(problem, 4);
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
          CHECK(numerics_verdict(problem, errors, single).passed);
        }
    CHECK(runs >= 25);
  }
}

TEST_CASE("emulated CUDA executor: the host's issuing time is recorded, within the run's wall time", "[cuda-emulation]") {
  // validate prints it beside the makespan (a host-paced run is not the model's error); issuing
  // is part of the run, so it can be neither absent nor longer than the run's wall time.
  const Problem problem = problem_of(MaskKind::causal, 96, DType::bf16);
  const auto [inputs, reference] = reference_case(problem, 5);
  schedules::GeneratorOptions options;
  options.gpus = 4;
  const schedules::CheckedSchedule checked = schedules::generate_checked("ring", problem, options);
  for (const char* backend : {"cuda", "cpu"}) {
    auto executor = make_executor(backend, {});
    ExecutionRecord record;
    run_from_reference(*executor, checked, inputs, reference, record);
    INFO(backend);
    if (std::string(backend) == "cuda") {
      CHECK(record.host_issue_s > 0);
      CHECK(record.host_issue_s <= record.wall_s);
    } else {
      CHECK(record.host_issue_s == 0);  // not measured: the CPU executor's threads issue nothing
    }
  }
}

TEST_CASE("emulated CUDA executor: NCCL transport, rank r on GPU r", "[cuda-emulation]") {
  // The emulated machine has 8 GPUs; NCCL point-to-point between them (emulated_nccl.cpp).
  ExecutorOptions options;
  options.transport = Transport::nccl;
  auto nccl = make_executor("cuda", options);
  auto local = make_executor("cuda", {});
  const Problem problem = problem_of(MaskKind::causal, 120, DType::bf16);
  const auto [inputs, reference] = reference_case(problem, 5);
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
      CHECK(numerics_verdict(problem, errors, single).passed);
      // A local run right after: its virtual ranks must live on the GPU the caller had current
      // (GPU 0), whichever GPU the NCCL run selected last.
      const Errors after = run(*local, "ring", problem, 4, Layout::zigzag, inputs, reference);
      CHECK(numerics_verdict(problem, after, single).passed);
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
  const CalibrationFile file = calibration_file(calibration, "emulated", shape);
  CHECK(file.device == "emulated");
  REQUIRE(file.measured.has_value());
  CHECK(file.measured->blocks.size() == 3);
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
    const auto [inputs, reference] = reference_case(problem, 6);
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
      CHECK(numerics_verdict(problem, errors[0], single).passed);
      if (pass == Pass::backward) {
        CHECK(errors[0].out == 0);
        CHECK(errors[0].lse == 0);
      }
    }
  }
}


TEST_CASE("emulated CUDA executor: can_run refuses what cannot run, before anything starts", "[cuda-emulation]") {
  const Problem problem = problem_of(MaskKind::causal, 120, DType::bf16);
  schedules::GeneratorOptions options;
  options.gpus = 4;
  const schedules::CheckedSchedule checked = schedules::generate_checked("ring", problem, options);
  ExecutorOptions nccl_options;
  nccl_options.transport = Transport::nccl;
  ExecutorOptions mpi_options;
  mpi_options.transport = Transport::mpi;
  auto local = make_executor("cuda", {});
  auto nccl = make_executor("cuda", nccl_options);

  // Head dimensions beyond the kernels' registers: the request must change.
  Problem wide = problem;
  wide.head_dim = wide.head_dim_v = 320;
  const Readiness too_wide = local->can_run(schedules::generate_checked("ring", wide, options));
  CHECK(too_wide.refusal() == Readiness::Refusal::unsupported);
  CHECK(too_wide.reason() == "--head-dim: the CUDA kernels support head dimensions up to 256");

  // GPU 2 with 1 kB free: rank 2 of the nccl transport lives there; local ranks live on GPU 0.
  struct FreeBytesRestored {
    ~FreeBytesRestored() { tessera_emulation::set_free_bytes(2, tessera_emulation::kDeviceBytes); }
  } restore;
  tessera_emulation::set_free_bytes(2, 1000);
  CHECK(local->can_run(checked).ok());
  const Readiness full = nccl->can_run(checked);
  CHECK(full.refusal() == Readiness::Refusal::unsupported);
  CHECK_THAT(full.reason(), Catch::StartsWith("the schedule does not fit on GPU 2") && Catch::Contains("(1 rank(s))"));

  // Under MPI process 2 (GPU 2) refuses, and every other process hears of it instead of going on
  // to set up NCCL and wait for it.
  std::vector<std::string> reasons(4);
  tessera_emulation::run_mpi_processes(4, [&](int rank) {
    reasons[static_cast<size_t>(rank)] = make_executor("cuda", mpi_options)->can_run(checked).reason();
  });
  CHECK_THAT(reasons[2], Catch::StartsWith("the schedule does not fit on GPU 2"));
  for (int rank : {0, 1, 3}) CHECK(reasons[static_cast<size_t>(rank)] == "MPI process 2 cannot run the schedule (it says why)");

  // One process per rank: three processes for four ranks is refused everywhere alike.
  tessera_emulation::set_free_bytes(2, tessera_emulation::kDeviceBytes);
  std::vector<std::string> mismatched(3);
  tessera_emulation::run_mpi_processes(3, [&](int rank) {
    mismatched[static_cast<size_t>(rank)] = make_executor("cuda", mpi_options)->can_run(checked).reason();
  });
  for (const std::string& reason : mismatched)
    CHECK(reason == "the mpi transport runs one process per rank: the schedule has 4 ranks but mpirun started 3 processes");
  CHECK(nccl->can_run(checked).ok());
}
