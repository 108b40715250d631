#include "tessera/costmodel/generators.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

Schedule generate_from_assignment(const Problem&, const GeneratorOptions&, const BlockGrid&) {
  throw UserError("generator 'assignment' is not available yet");
}

}  // namespace tessera
