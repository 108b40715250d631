#pragma once
// Command-line flags for a problem, a schedule, the hardware and the network. The text is
// parsed by the scenario library after CLI11, so every error names its flag.
#include <CLI/CLI.hpp>

#include "tessera/scenario/network.hpp"
#include "tessera/scenario/scenario.hpp"

namespace tessera::cli {

using ProblemFlags = scenario::ProblemText;
using ScheduleFlags = scenario::ScheduleText;
using NetworkFlags = scenario::NetworkText;
using HardwareFlags = scenario::HardwareValues;
using scenario::gpu_count;
using scenario::make_hardware;
using scenario::make_network;
using scenario::make_options;
using scenario::make_problem;

void add_problem_flags(CLI::App& app, ProblemFlags& flags);
void add_schedule_flags(CLI::App& app, ScheduleFlags& flags, bool algorithm_required);
void add_hardware_flags(CLI::App& app, HardwareFlags& flags);
void add_network_flags(CLI::App& app, NetworkFlags& flags);

// --gpus follows the topology: when `command` has --topology and it was given but --gpus was
// not (and the schedule is not a file, which carries its own count), the topology's GPU count
// (a file's or a sized preset's) replaces the built-in default.
void gpus_from_topology(const CLI::App& command, ProblemFlags& problem, const NetworkFlags& network);

}  // namespace tessera::cli
