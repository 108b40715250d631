#include "tessera/costmodel/generators.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

Schedule generate_ulysses(const Problem&, const GeneratorOptions&, const BlockGrid&) {
  throw UserError("generator 'ulysses' is not available yet");
}

}  // namespace tessera
