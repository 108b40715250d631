#pragma once
// Per-kernel and per-message costs for a simulator run, in one place for every front end: the
// analytical hardware's figures (command-line flags, or the published defaults of cost.hpp and
// network_model.hpp), replaced by a calibration file's where it measured them.
#include <string>

#include "tessera/costmodel/cost.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/simulator.hpp"

namespace tessera::sim {

// `calibration` may be empty. The figures a calibration file has ("launch_overhead_s", the
// fields of its "message" object) win over the hardware's; those it lacks are the hardware's.
inline void apply_overheads(const costmodel::Hardware& hardware, const std::string& calibration, GpuProfile& gpu,
                            SimOptions& options) {
  options.set_message_costs(hardware.message);
  gpu.launch_overhead_s = hardware.kernel_launch_s;
  if (calibration.empty()) return;
  if (const auto launch_s = read_launch_calibration(calibration)) gpu.launch_overhead_s = *launch_s;
  if (const auto message = read_message_calibration(calibration, hardware.message)) options.set_message_costs(*message);
}

}  // namespace tessera::sim
