#pragma once
// A scenario as text: the fields a user types (on the command line, in a sweep spec, in the
// GUI's parameter panel), parsed into the core's types. Every parse error names the field in
// its command-line spelling (`--seq: ...`) so that each front end can report it as is.
#include <cstdint>
#include <string>

#include "tessera/core/problem.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/costmodel/generators.hpp"

namespace tessera::scenario {

struct ProblemText {
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

struct ScheduleText {
  std::string algorithm;
  std::string tile;
  std::string variant;
  std::string input;
};

struct NetworkText {
  std::string topology;             // preset or file; empty: the uniform network
  std::string placement = "linear"; // linear, round-robin, auto, list:...
};

struct HardwareValues {
  double peak_tflops = 989;
  double efficiency = 0.6;
  double hbm_gbps = 3350;
  double bandwidth_gbps = 50;
  double latency_us = 5;
};

Problem make_problem(const ProblemText& text);  // throws UserError naming the field
int32_t gpu_count(const ProblemText& text);      // 1 .. 2^20, or UserError
GeneratorOptions make_options(const ProblemText& problem, const ScheduleText& schedule);
Hardware make_hardware(const HardwareValues& values);

}  // namespace tessera::scenario
