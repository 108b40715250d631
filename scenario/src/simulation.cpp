#include "tessera/scenario/simulation.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/units.hpp"
#include "tessera/sim/overheads.hpp"

namespace tessera::scenario {

namespace {
// parse(), its UserError prefixed with the flag.
template <typename Parse>
auto with_flag(const char* flag, Parse parse) {
  try {
    return parse();
  } catch (const UserError& error) {
    throw UserError(std::string(flag) + ": " + error.what());
  }
}
}  // namespace

Simulation make_simulation(const SimulationText& text, const costmodel::Hardware& hardware) {
  Simulation simulation;
  simulation.gpu = text.calibration.empty() ? with_flag("--gpu", [&] { return sim::gpu_profile(text.gpu); })
                                            : sim::read_calibration(text.calibration);  // names its file
  simulation.options.fidelity = with_flag("--fidelity", [&] { return sim::parse_fidelity(text.fidelity); });
  sim::apply_overheads(hardware, text.calibration, simulation.gpu, simulation.options);
  if (text.channels < 0) throw UserError("--channels: must not be negative, got " + std::to_string(text.channels));
  simulation.options.channels = text.channels;
  if (!text.chunk.empty()) {
    // A size in bytes (core/units.hpp: 4M and 4MiB are 2^22 bytes, 4MB is 4e6).
    const int64_t chunk_bytes = with_flag("--chunk", [&] { return parse_byte_size(text.chunk); });
    if (chunk_bytes <= 0) throw UserError("--chunk: must be positive, got " + tessera::quoted(text.chunk));
    simulation.options.chunk_bytes = static_cast<double>(chunk_bytes);
  }
  return simulation;
}

}  // namespace tessera::scenario
