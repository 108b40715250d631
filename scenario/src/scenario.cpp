#include "tessera/scenario/scenario.hpp"

#include <cstdio>
#include <sstream>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::scenario {

using costmodel::Hardware;
using schedules::GeneratorOptions;

namespace {
int64_t count_flag(const std::string& value, const char* flag) {
  try {
    return parse_count(value);
  } catch (const UserError& error) {
    throw UserError(std::string(flag) + ": " + error.what());
  }
}
template <typename Parse>
auto enum_flag(const std::string& value, const char* flag, Parse parse) {
  try {
    return parse(value);
  } catch (const UserError& error) {
    throw UserError(std::string(flag) + ": " + error.what());
  }
}
}  // namespace

Problem make_problem(const ProblemText& flags) {
  Problem problem;
  problem.seq_len = count_flag(flags.seq, "--seq");
  problem.batch = count_flag(flags.batch, "--batch");
  problem.heads = count_flag(flags.heads, "--heads");
  problem.kv_heads = count_flag(flags.kv_heads, "--kv-heads");
  problem.head_dim = count_flag(flags.head_dim, "--head-dim");
  problem.head_dim_v = flags.head_dim_v.empty() ? problem.head_dim : count_flag(flags.head_dim_v, "--head-dim-v");
  problem.dtype = enum_flag(flags.dtype, "--dtype", parse_dtype);
  problem.mask.kind = enum_flag(flags.mask, "--mask", parse_mask_kind);
  problem.pass = enum_flag(flags.pass, "--pass", parse_pass);
  if (problem.mask.kind == MaskKind::sliding_window) problem.mask.window_tokens = count_flag(flags.window, "--window");
  if (problem.mask.kind == MaskKind::documents) {
    if (flags.documents.empty()) throw UserError("--mask documents needs --documents LENGTHS (e.g. 512K,512K)");
    std::stringstream stream(flags.documents);
    std::string part;
    while (std::getline(stream, part, ',')) problem.mask.document_lengths.push_back(count_flag(part, "--documents"));
  } else if (!flags.documents.empty()) {
    throw UserError("--documents is only meaningful with --mask documents");
  }
  problem.validate(kProblemFlagNames);
  return problem;
}

int32_t gpu_count(const ProblemText& text) {
  const int64_t gpus = count_flag(text.gpus, "--gpus");
  if (gpus < 1 || gpus > (1 << 20)) throw UserError("--gpus: expected 1 to 1048576 GPUs, got " + tessera::quoted(text.gpus));
  return static_cast<int32_t>(gpus);
}

namespace {
int32_t buffer_count(const std::string& text) {
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos)
    throw UserError("--buffers: expected a whole number of buffers per receive stream (0 = unbounded, at most "
                    "9999999), got " + tessera::quoted(text));
  return static_cast<int32_t>(std::stol(text));
}
}  // namespace

namespace {
// The schedule flags each generator reads (schedules/generators.hpp and each generator's file):
// a flag another generator would read is refused, never ignored. The variants are listed here
// too, so that a wrong one is reported under its flag.
struct GeneratorFlags {
  const char* algorithm;
  std::vector<const char*> variants;  // empty: --variant does not apply
  bool tile;
  bool input;
};
const std::vector<GeneratorFlags>& generator_flags() {
  static const std::vector<GeneratorFlags> table = {
      {"ring", {"pass-kv", "pass-q"}, false, false},
      {"all-gather", {}, false, false},
      {"ulysses", {}, false, false},
      {"usp", {}, true, false},
      {"attention2d", {"collective", "ring"}, true, false},
      {"mesh", {"greedy", "ring-order", "receives-first", "optimal"}, true, false},
      {"assignment", {}, false, true},
      {"file", {}, false, true},
  };
  return table;
}

std::string joined(const std::vector<const char*>& names) {
  std::string text;
  for (const char* name : names) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

void require_schedule_flags_apply(const ScheduleText& schedule) {
  if (schedule.algorithm.empty()) {  // plan: every generator, none of these flags
    if (!schedule.variant.empty() || !schedule.tile.empty() || !schedule.input.empty())
      throw UserError("--variant, --tile and --input need --algo");
    return;
  }
  const GeneratorFlags* flags = nullptr;
  std::vector<const char*> known;
  for (const GeneratorFlags& candidate : generator_flags()) {
    known.push_back(candidate.algorithm);
    if (schedule.algorithm == candidate.algorithm) flags = &candidate;
  }
  if (flags == nullptr)
    throw UserError("--algo: unknown algorithm " + tessera::quoted(schedule.algorithm) + " (expected one of " + joined(known) + ")");
  const std::string algo = "--algo " + schedule.algorithm;
  if (!schedule.variant.empty()) {
    if (flags->variants.empty())
      throw UserError("--variant: " + algo + " has no variants (ring, attention2d and mesh have)");
    bool listed = false;
    for (const char* variant : flags->variants) listed = listed || schedule.variant == variant;
    if (!listed)
      throw UserError("--variant: " + algo + " takes " + joined(flags->variants) + ", got " + tessera::quoted(schedule.variant));
  }
  if (!schedule.tile.empty() && !flags->tile)
    throw UserError("--tile: " + algo + " has no tile shape (mesh, attention2d and usp have)");
  if (!schedule.input.empty() && !flags->input)
    throw UserError("--input: " + algo + " reads no file (file and assignment do)");
  if (schedule.input.empty() && flags->input) throw UserError(algo + " needs --input FILE (a JSON file)");
}
}  // namespace

GeneratorOptions make_options(const ProblemText& problem, const ScheduleText& schedule) {
  require_schedule_flags_apply(schedule);
  GeneratorOptions options;
  options.gpus = gpu_count(problem);
  if (!problem.layout.empty()) options.layout = enum_flag(problem.layout, "--layout", parse_layout);
  if (!schedule.tile.empty()) options.tile = enum_flag(schedule.tile, "--tile", parse_tile);
  options.variant = schedule.variant;
  options.input_path = schedule.input;
  options.buffers = buffer_count(problem.buffers);
  return options;
}

namespace {
// `value` when it lies in [low, high] (so it is finite), else a UserError naming the flag, the
// range and the value: the front end's one line, never a figure made of inf or NaN downstream.
double in_range(double value, double low, double high, const char* flag, const char* what) {
  if (value >= low && value <= high) return value;
  char text[200];
  std::snprintf(text, sizeof text, ": expected %s from %g to %g, got %g", what, low, high, value);
  throw UserError(flag + std::string(text));
}
}  // namespace

Hardware make_hardware(const HardwareValues& flags) {
  Hardware hardware;
  hardware.peak_flops_per_s =
      in_range(flags.peak_tflops, kMinPeakTflops, kMaxPeakTflops, "--peak-tflops", "TFLOP/s") * 1e12;
  hardware.compute_efficiency =
      in_range(flags.efficiency, kMinEfficiency, 1, "--efficiency", "a fraction of peak");
  // A bandwidth with its unit wins; else the GB/s number, multiplied as NUMBER GB/s would be.
  auto bandwidth = [&](const std::string& text, const char* flag, double gbps, const char* gbps_flag) {
    if (!text.empty()) return parse_bandwidth_bytes_per_s(text, flag);
    const double bytes_per_s = gbps * kBytesPerSecondPerGBps;
    in_range(bytes_per_s, kMinBandwidthBytesPerS, kMaxBandwidthBytesPerS, gbps_flag, "a bandwidth in B/s");
    return bytes_per_s;
  };
  hardware.hbm_bytes_per_s = bandwidth(flags.hbm_bandwidth, "--hbm-bandwidth", flags.hbm_gbps, "--hbm-gbps");
  hardware.link_bytes_per_s = bandwidth(flags.bandwidth, "--bandwidth", flags.bandwidth_gbps, "--bandwidth-gbps");
  auto seconds = [](double microseconds, const char* flag) {
    return in_range(microseconds, 0, kMaxMicroseconds, flag, "microseconds") * 1e-6;
  };
  hardware.link_latency_s = seconds(flags.latency_us, "--latency-us");
  hardware.kernel_launch_s = seconds(flags.launch_us, "--launch-us");
  hardware.message.overhead_s = seconds(flags.overhead_us, "--overhead-us");
  hardware.message.nvlink_latency_s = seconds(flags.nvlink_message_us, "--nvlink-message-us");
  hardware.message.network_latency_s = seconds(flags.network_message_us, "--network-message-us");
  return hardware;
}

}  // namespace tessera::scenario
