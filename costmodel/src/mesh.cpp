#include "tessera/costmodel/generators.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

Schedule generate_mesh(const Problem&, const GeneratorOptions&, const BlockGrid&) {
  throw UserError("generator 'mesh' is not available yet");
}

}  // namespace tessera
