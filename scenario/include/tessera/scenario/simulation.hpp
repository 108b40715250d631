#pragma once
// A simulator run as a scenario asks for it: the GPU's compute model and the simulator's
// options, with the per-kernel and per-message costs in place. The simulator's outputs
// (result, Chrome trace, CSV) come to front ends through this header.
#include <string>

#include "tessera/costmodel/cost.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/sim/trace.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera::scenario {

struct Simulation {
  sim::GpuProfile gpu;
  sim::SimOptions options;
};

struct SimulationText {
  std::string gpu{kDefaultGpu.name};   // a GPU profile (sim/gpu_profile.hpp), unless a calibration is given
  std::string calibration;    // a calibration file (tessera calibrate); empty: none
  std::string fidelity = "flow";
  int32_t channels = 0;       // 0: unlimited
  std::string chunk;          // message chunk size (4M, ...); empty: whole messages
};

// The GPU model and options for `text` on `hardware`: the hardware's launch and per-message
// costs, replaced by a calibration file's where it measured them. UserError naming the flag.
Simulation make_simulation(const SimulationText& text, const costmodel::Hardware& hardware);

}  // namespace tessera::scenario
