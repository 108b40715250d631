#pragma once
// Flags shared by the commands that describe a problem, a schedule and the hardware.
#include <string>

#include <CLI/CLI.hpp>

#include "tessera/core/problem.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/costmodel/generators.hpp"

namespace tessera::cli {

// Raw text of the flags, parsed after CLI11 so that every error names its flag.
struct ProblemFlags {
  std::string gpus = "256";
  std::string seq = "1M";
  std::string batch = "1";
  std::string heads = "32";
  std::string kv_heads = "8";
  std::string head_dim = "128";
  std::string head_dim_v;  // default: head_dim
  std::string dtype = "bf16";
  std::string mask = "causal";
  std::string window = "4K";
  std::string documents;   // comma-separated lengths
  std::string layout;      // default: contiguous for full, zigzag otherwise
  std::string pass = "both";
};

struct ScheduleFlags {
  std::string algorithm;
  std::string tile;
  std::string variant;
  std::string input;
};

struct NetworkFlags {
  std::string topology;             // preset or file; empty: the uniform network
  std::string placement = "linear"; // linear, round-robin, auto, list:...
};

struct HardwareFlags {
  double peak_tflops = 989;
  double efficiency = 0.6;
  double hbm_gbps = 3350;
  double bandwidth_gbps = 50;
  double latency_us = 5;
};

void add_problem_flags(CLI::App& app, ProblemFlags& flags);
void add_schedule_flags(CLI::App& app, ScheduleFlags& flags, bool algorithm_required);
void add_hardware_flags(CLI::App& app, HardwareFlags& flags);
void add_network_flags(CLI::App& app, NetworkFlags& flags);

Problem make_problem(const ProblemFlags& flags);          // throws UserError naming the flag
GeneratorOptions make_options(const ProblemFlags& problem, const ScheduleFlags& schedule);
Hardware make_hardware(const HardwareFlags& flags);

}  // namespace tessera::cli
