#pragma once
// How an executor's outputs are judged: each output's largest error against the fp64 reference
// (reference.hpp), and the pass criterion of research/peers.md 3, in this one place for the
// command line and every test suite: a distributed run's error within 2x that of the same
// computation on one device at the same precision.
#include <array>
#include <vector>

#include "tessera/backend/executor.hpp"
#include "tessera/backend/tensors.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/schedules/checker.hpp"

namespace tessera::backend {

// Largest absolute difference between two tensors of equal size. A NaN anywhere, or sizes that
// differ, is an infinite error.
double max_abs_error(const std::vector<double>& a, const std::vector<double>& b);

struct OutputErrors {
  double out = 0, lse = 0, d_q = 0, d_k = 0, d_v = 0;
};

// The five outputs by the names reports use ("O", "LSE", "dQ", "dK", "dV").
struct NamedOutput {
  const char* name;
  double OutputErrors::*error;
  bool backward;  // a backward output (dQ, dK, dV) rather than a forward one (O, LSE)
};
inline constexpr std::array<NamedOutput, 5> kOutputs = {{{"O", &OutputErrors::out, false},
                                                          {"LSE", &OutputErrors::lse, false},
                                                          {"dQ", &OutputErrors::d_q, true},
                                                          {"dK", &OutputErrors::d_k, true},
                                                          {"dV", &OutputErrors::d_v, true}}};
// Whether the problem's pass computes the output (a backward-only run takes O and LSE as input).
bool computes(const Problem& problem, const NamedOutput& output);

// Every output's error, computed or not (an output a run only carries must come back intact).
OutputErrors output_errors(const AttentionTensors& result, const AttentionTensors& reference);

// Errors below this count as this much, so that a lucky near-zero single-device error does not
// fail a run.
constexpr double kSingleDeviceErrorFloor = 1e-6;
constexpr double kErrorRatioLimit = 2;

// The largest ratio of an output's error to the single-device one (floored as above), over all
// five outputs.
double worst_error_ratio(const OutputErrors& errors, const OutputErrors& single_device);

struct NumericsVerdict {
  bool passed = true;
  const char* worst_output = "";  // the output with the largest ratio, of those the pass computes
  double worst_ratio = 0;
};
// The pass criterion: every output the problem's pass computes has an error at most
// kErrorRatioLimit x max(its single-device error, kSingleDeviceErrorFloor).
NumericsVerdict numerics_verdict(const Problem& problem, const OutputErrors& errors, const OutputErrors& single_device);

// Runs `checked` on `executor` (which said it can) from `inputs`, with the reference's O and
// LSE standing in for the forward a backward pass starts from; returns the tensors it filled.
AttentionTensors run_from_reference(ScheduleExecutor& executor, const schedules::CheckedSchedule& checked,
                                    const AttentionTensors& inputs, const AttentionTensors& reference,
                                    ExecutionRecord& record);

}  // namespace tessera::backend
