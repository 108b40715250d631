#pragma once
// A scenario as text: the fields a user types (on the command line, in a sweep spec, in the
// GUI's parameter panel), parsed into the core's types. Every parse error names the field in
// its command-line spelling (`--seq: ...`) so that each front end can report it as is.
#include <cstdint>
#include <string>

#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/core/units.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/generators.hpp"

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

// The analytical model's hardware. Defaults: the default GPU and network link of
// core/hardware_presets.hpp (each conversion below is exact: 989, 0.6, 3350, 50, 5).
struct HardwareValues {
  double peak_tflops = kDefaultGpu.peak_flops_per_s_16bit / 1e12;
  double efficiency = kDefaultGpu.analytical_efficiency;
  // Bandwidths with their unit, as typed (`--hbm-bandwidth 3.35TB/s`, `--bandwidth 400Gb/s`;
  // core/units.hpp). When given, each replaces the GB/s number below it.
  std::string hbm_bandwidth;
  std::string bandwidth;
  // The same in GB/s (bytes): the sweep's hbm_gbps and bandwidth_gbps columns and the
  // deprecated --hbm-gbps and --bandwidth-gbps.
  double hbm_gbps = kDefaultGpu.hbm_bytes_per_s / kBytesPerSecondPerGBps;
  double bandwidth_gbps = kDefaultNetworkLink.bytes_per_s / kBytesPerSecondPerGBps;
  double latency_us = kDefaultNetworkLink.latency_s * 1e6;
  // Per-kernel and per-message costs (cost.hpp and network_model.hpp name their sources).
  double launch_us = costmodel::Hardware::kKernelLaunchS * 1e6;                  // per block kernel
  double overhead_us = MessageCosts::kNcclBaseLatencyS * 1e6;         // per message, any path
  double nvlink_message_us = MessageCosts::kNcclNvlinkLatencyS * 1e6;  // per message inside a server
  double network_message_us = MessageCosts::kNcclNetworkLatencyS * 1e6;  // per message leaving it
};

Problem make_problem(const ProblemText& text);  // throws UserError naming the field
int32_t gpu_count(const ProblemText& text);      // 1 .. 2^20, or UserError
schedules::GeneratorOptions make_options(const ProblemText& problem, const ScheduleText& schedule);
// The ranges make_hardware accepts (README: hardware flags): wide enough for any machine, a CPU
// included, and narrow enough that every time the models compute stays a finite number.
inline constexpr double kMinPeakTflops = 1e-6, kMaxPeakTflops = 1e6;  // 1 MFLOP/s to 1 EFLOP/s
inline constexpr double kMinEfficiency = 1e-6;                        // to 1
inline constexpr double kMaxMicroseconds = 1e6;                       // latencies, launch: 0 to 1 s

// Throws UserError naming the flag (`--bandwidth: ...`) when a value is out of range (NaN and
// infinities included) or a bandwidth has no known unit.
costmodel::Hardware make_hardware(const HardwareValues& values);

}  // namespace tessera::scenario
