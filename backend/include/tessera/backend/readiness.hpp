#pragma once
// Whether a run can go ahead, answered before anything is allocated, as CUTLASS's can_implement
// is: a caller asks first (ScheduleExecutor::can_run, reference_readiness) and runs only on a
// yes, so a run that cannot go ahead is refused with the reason in words instead of failing
// halfway through.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera::backend {

// Thrown when a backend cannot run here; the message says why in words.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Readiness {
 public:
  enum class Refusal : uint8_t {
    none,
    unsupported,  // beyond what the executor does (kernel limits, more memory than there is): change the request
    unavailable,  // this machine lacks what the run needs (GPUs, processes): the request may run elsewhere
  };

  static Readiness ready() { return {}; }
  static Readiness unsupported(std::string reason) { return {Refusal::unsupported, std::move(reason)}; }
  static Readiness unavailable(std::string reason) { return {Refusal::unavailable, std::move(reason)}; }

  bool ok() const { return refusal_ == Refusal::none; }
  Refusal refusal() const { return refusal_; }
  const std::string& reason() const { return reason_; }  // empty when ready

 private:
  Readiness() = default;
  Readiness(Refusal refusal, std::string reason) : refusal_(refusal), reason_(std::move(reason)) {}
  Refusal refusal_ = Refusal::none;
  std::string reason_;
};

// Nothing when ready; otherwise throws the refusal: UserError (unsupported) or
// BackendUnavailable (unavailable), with the reason as the message.
void require_ready(const Readiness& readiness);

}  // namespace tessera::backend
