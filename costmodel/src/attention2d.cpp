#include "tessera/costmodel/generators.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

Schedule generate_attention2d(const Problem&, const GeneratorOptions&, const BlockGrid&) {
  throw UserError("generator 'attention2d' is not available yet");
}

}  // namespace tessera
