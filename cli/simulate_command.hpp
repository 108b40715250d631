#pragma once
// `tessera simulate`: one schedule (or one standalone collective) through the event-driven
// simulator, with its timeline, link figures and outputs.
#include "commands.hpp"
#include "problem_flags.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera::cli {

struct SimulateFlags {
  std::string fidelity = "flow";
  std::string gpu{kDefaultGpu.name};
  std::string calibration;
  std::string trace;      // Chrome trace JSON file
  std::string ops_csv;
  std::string links_csv;
  std::string collective; // standalone collective instead of a schedule
  std::string size = "1G";
  std::string algorithm = "ring";  // all-reduce: ring or tree
  std::string chunk;        // chunk size of point-to-point messages ("" = whole messages)
  int channels = 0;         // communication channels per GPU (0: unlimited)
};

int run_simulate(const ProblemFlags& problem, const ScheduleFlags& schedule, const HardwareFlags& hardware,
                 const NetworkFlags& network, const SimulateFlags& simulate, const CommonFlags& common);

}  // namespace tessera::cli
