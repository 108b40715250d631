#pragma once
// Runs a generated, checked schedule on an executor and measures each output's error against a
// reference computation; shared by the GPU suite and the CUDA emulation suite. No Catch2 macros
// here: emulated MPI processes call it from several threads at once, so failures are thrown.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tessera/backend/executor.hpp"
#include "tessera/costmodel/checker.hpp"
#include "tessera/costmodel/generators.hpp"

namespace tessera::testing {

struct OutputErrors {
  double out = 0, lse = 0, d_q = 0, d_k = 0, d_v = 0;
  // The worst ratio to another run's errors (errors below 1e-6 count as 1e-6).
  double worst_ratio(const OutputErrors& single) const {
    auto ratio = [](double a, double b) { return a / std::max(b, 1e-6); };
    return std::max({ratio(out, single.out), ratio(lse, single.lse), ratio(d_q, single.d_q), ratio(d_k, single.d_k),
                     ratio(d_v, single.d_v)});
  }
};

// Seeded random inputs and dense fp64 attention on them: what every run is measured against.
struct ReferenceCase {
  backend::AttentionTensors inputs, reference;
};
inline ReferenceCase reference_case(const Problem& problem, uint64_t seed) {
  ReferenceCase made{backend::random_inputs(problem, seed), {}};
  made.reference = made.inputs;
  backend::dense_attention(problem, made.reference, problem.has_backward());
  return made;
}

// The caller's reference O and LSE go in as the backward pass's inputs.
inline OutputErrors run_against_reference(backend::ScheduleExecutor& executor, const std::string& algorithm,
                                          const Problem& problem, int32_t gpus, Layout layout,
                                          const backend::AttentionTensors& inputs,
                                          const backend::AttentionTensors& reference) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = layout;
  Schedule schedule = generate_schedule(algorithm, problem, options);
  BlockGrid grid(schedule.problem, schedule.layout, schedule.chunks());
  CheckResult check = check_schedule(schedule, grid);
  if (!check.ok()) throw std::logic_error(algorithm + " schedule fails the checker: " + check.violation);
  backend::AttentionTensors tensors = inputs;
  tensors.out = reference.out;
  tensors.lse = reference.lse;
  backend::ExecutionRecord record;
  executor.execute(schedule, grid, check.analysis, tensors, record);
  OutputErrors errors;
  errors.out = backend::max_abs_error(tensors.out, reference.out);
  errors.lse = backend::max_abs_error(tensors.lse, reference.lse);
  errors.d_q = backend::max_abs_error(tensors.d_q, reference.d_q);
  errors.d_k = backend::max_abs_error(tensors.d_k, reference.d_k);
  errors.d_v = backend::max_abs_error(tensors.d_v, reference.d_v);
  return errors;
}

}  // namespace tessera::testing
