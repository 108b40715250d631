#include "tessera/costmodel/generators.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

Schedule generate_usp(const Problem&, const GeneratorOptions&, const BlockGrid&) {
  throw UserError("generator 'usp' is not available yet");
}

}  // namespace tessera
