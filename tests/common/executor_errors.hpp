#pragma once
// Runs a generated, checked schedule on an executor against the fp64 reference; shared by the
// GPU suite and the CUDA emulation suite. The error measures and the pass criterion are the
// backend's (tessera/backend/numerics.hpp). No Catch2 macros here: emulated MPI processes call
// it from several threads at once, so failures are thrown.
#include <cstdint>
#include <string>

#include "tessera/backend/executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::testing {

// The caller's reference O and LSE go in as the backward pass's inputs. A refusal of can_run is
// thrown (UserError or BackendUnavailable, with the reason).
inline backend::OutputErrors run_against_reference(backend::ScheduleExecutor& executor, const std::string& algorithm,
                                                   const Problem& problem, int32_t gpus, Layout layout,
                                                   const backend::AttentionTensors& inputs,
                                                   const backend::AttentionTensors& reference) {
  schedules::GeneratorOptions options;
  options.gpus = gpus;
  options.layout = layout;
  const schedules::CheckedSchedule checked = schedules::generate_checked(algorithm, problem, options);
  backend::require_ready(executor.can_run(checked));
  backend::ExecutionRecord record;
  return backend::output_errors(backend::run_from_reference(executor, checked, inputs, reference, record), reference);
}

}  // namespace tessera::testing
