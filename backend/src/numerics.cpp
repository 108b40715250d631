#include "tessera/backend/numerics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::backend {

double max_abs_error(const std::vector<double>& a, const std::vector<double>& b) {
  // A NaN anywhere is an infinite error (std::max would silently skip it).
  double worst = 0;
  for (size_t index = 0; index < a.size() && index < b.size(); ++index) {
    const double error = std::abs(a[index] - b[index]);
    if (std::isnan(error)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, error);
  }
  return a.size() == b.size() ? worst : std::numeric_limits<double>::infinity();
}

bool computes(const Problem& problem, const NamedOutput& output) {
  return output.backward ? problem.has_backward() : problem.has_forward();
}

OutputErrors output_errors(const AttentionTensors& result, const AttentionTensors& reference) {
  OutputErrors errors;
  errors.out = max_abs_error(result.out, reference.out);
  errors.lse = max_abs_error(result.lse, reference.lse);
  errors.d_q = max_abs_error(result.d_q, reference.d_q);
  errors.d_k = max_abs_error(result.d_k, reference.d_k);
  errors.d_v = max_abs_error(result.d_v, reference.d_v);
  return errors;
}

namespace {
double error_ratio(double error, double single_device_error) {
  return error / std::max(single_device_error, kSingleDeviceErrorFloor);
}
}  // namespace

double worst_error_ratio(const OutputErrors& errors, const OutputErrors& single_device) {
  double worst = 0;
  for (const NamedOutput& output : kOutputs)
    worst = std::max(worst, error_ratio(errors.*output.error, single_device.*output.error));
  return worst;
}

NumericsVerdict numerics_verdict(const Problem& problem, const OutputErrors& errors, const OutputErrors& single_device) {
  NumericsVerdict verdict;
  for (const NamedOutput& output : kOutputs) {
    if (!computes(problem, output)) continue;
    const double error = errors.*output.error, single = single_device.*output.error;
    // As a product, not through the ratio, whose rounding could decide a case at the limit.
    verdict.passed = verdict.passed && error <= kErrorRatioLimit * std::max(single, kSingleDeviceErrorFloor);
    const double ratio = error_ratio(error, single);
    if (*verdict.worst_output == '\0' || ratio > verdict.worst_ratio) {
      verdict.worst_output = output.name;
      verdict.worst_ratio = ratio;
    }
  }
  return verdict;
}

AttentionTensors run_from_reference(ScheduleExecutor& executor, const schedules::CheckedSchedule& checked,
                                    const AttentionTensors& inputs, const AttentionTensors& reference,
                                    ExecutionRecord& record) {
  AttentionTensors tensors = inputs;
  tensors.out = reference.out;
  tensors.lse = reference.lse;
  executor.execute(checked, tensors, record);
  return tensors;
}

}  // namespace tessera::backend
