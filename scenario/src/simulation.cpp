#include "tessera/scenario/simulation.hpp"

#include "tessera/core/error.hpp"
#include "tessera/sim/overheads.hpp"

namespace tessera::scenario {

Simulation make_simulation(const SimulationText& text, const costmodel::Hardware& hardware) {
  Simulation simulation;
  simulation.gpu = text.calibration.empty() ? sim::gpu_profile(text.gpu) : sim::read_calibration(text.calibration);
  simulation.options.fidelity = sim::parse_fidelity(text.fidelity);
  sim::apply_overheads(hardware, text.calibration, simulation.gpu, simulation.options);
  if (text.channels < 0) throw UserError("--channels: must not be negative");
  simulation.options.channels = text.channels;
  if (!text.chunk.empty()) {
    try {
      simulation.options.chunk_bytes = static_cast<double>(parse_count(text.chunk));
    } catch (const UserError& error) {
      throw UserError(std::string("--chunk: ") + error.what());
    }
    if (simulation.options.chunk_bytes <= 0) throw UserError("--chunk: must be positive");
  }
  return simulation;
}

}  // namespace tessera::scenario
