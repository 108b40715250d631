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
  std::string buffers = "2";  // remote-chunk buffers per receive stream; 0 = unbounded
};

struct ScheduleText {
  std::string algorithm;
  std::string tile;
  std::string variant;
  std::string input;
};

struct NetworkText {
  std::string topology;             // preset or file; empty: the uniform network
  std::string placement = "linear"; // linear, round-robin, rail-aligned, auto, list:... (topologies/placement.hpp)
  std::string routing;              // pxn or ecmp; empty: the topology's own (pxn on rail-optimised clusters)
};

struct HardwareValues {
  double peak_tflops = 989;
  double efficiency = 0.6;
  double hbm_gbps = 3350;
  double bandwidth_gbps = 50;
  double latency_us = 5;
  // Per-kernel and per-message costs (cost.hpp and network_model.hpp name their sources).
  double launch_us = Hardware::kKernelLaunchS * 1e6;                  // per block kernel
  double overhead_us = MessageCosts::kNcclBaseLatencyS * 1e6;         // per message, any path
  double nvlink_message_us = MessageCosts::kNcclNvlinkLatencyS * 1e6;  // per message inside a server
  double network_message_us = MessageCosts::kNcclNetworkLatencyS * 1e6;  // per message leaving it
};

Problem make_problem(const ProblemText& text);  // throws UserError naming the field
int32_t gpu_count(const ProblemText& text);      // 1 .. 2^20, or UserError
GeneratorOptions make_options(const ProblemText& problem, const ScheduleText& schedule);
Hardware make_hardware(const HardwareValues& values);

}  // namespace tessera::scenario
