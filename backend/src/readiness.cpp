#include "tessera/backend/readiness.hpp"

#include "tessera/core/error.hpp"

namespace tessera::backend {

void require_ready(const Readiness& readiness) {
  switch (readiness.refusal()) {
    case Readiness::Refusal::none: return;
    case Readiness::Refusal::unsupported: throw UserError(readiness.reason());
    case Readiness::Refusal::unavailable: throw BackendUnavailable(readiness.reason());
  }
}

}  // namespace tessera::backend
