#include "tessera/costmodel/generators.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

Schedule generate_all_gather(const Problem&, const GeneratorOptions&, const BlockGrid&) {
  throw UserError("generator 'all_gather' is not available yet");
}

}  // namespace tessera
