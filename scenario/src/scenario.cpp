#include "tessera/scenario/scenario.hpp"

#include <sstream>

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
  problem.validate();
  return problem;
}

int32_t gpu_count(const ProblemText& text) {
  const int64_t gpus = count_flag(text.gpus, "--gpus");
  if (gpus < 1 || gpus > (1 << 20)) throw UserError("--gpus: expected 1 to 1048576 GPUs, got " + text.gpus);
  return static_cast<int32_t>(gpus);
}

namespace {
int32_t buffer_count(const std::string& text) {
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos)
    throw UserError("--buffers: expected a whole number of buffers per receive stream (0 = unbounded), got '" + text + "'");
  return static_cast<int32_t>(std::stol(text));
}
}  // namespace

GeneratorOptions make_options(const ProblemText& problem, const ScheduleText& schedule) {
  GeneratorOptions options;
  options.gpus = gpu_count(problem);
  if (!problem.layout.empty()) options.layout = enum_flag(problem.layout, "--layout", parse_layout);
  if (!schedule.tile.empty()) options.tile = enum_flag(schedule.tile, "--tile", parse_tile);
  options.variant = schedule.variant;
  options.input_path = schedule.input;
  options.buffers = buffer_count(problem.buffers);
  return options;
}

Hardware make_hardware(const HardwareValues& flags) {
  auto positive = [](double value, const char* flag) {
    if (!(value > 0)) throw UserError(std::string(flag) + ": must be positive");
    return value;
  };
  Hardware hardware;
  hardware.peak_flops_per_s = positive(flags.peak_tflops, "--peak-tflops") * 1e12;
  hardware.compute_efficiency = positive(flags.efficiency, "--efficiency");
  if (hardware.compute_efficiency > 1) throw UserError("--efficiency: must be at most 1");
  // A bandwidth with its unit wins; else the GB/s number, multiplied as NUMBER GB/s would be.
  auto bandwidth = [&](const std::string& text, const char* flag, double gbps, const char* gbps_flag) {
    if (!text.empty()) return parse_bandwidth_bytes_per_s(text, flag);
    return positive(gbps, gbps_flag) * kBytesPerSecondPerGBps;
  };
  hardware.hbm_bytes_per_s = bandwidth(flags.hbm_bandwidth, "--hbm-bandwidth", flags.hbm_gbps, "--hbm-gbps");
  hardware.link_bytes_per_s = bandwidth(flags.bandwidth, "--bandwidth", flags.bandwidth_gbps, "--bandwidth-gbps");
  auto seconds = [](double microseconds, const char* flag) {
    if (!(microseconds >= 0)) throw UserError(std::string(flag) + ": must not be negative");
    return microseconds * 1e-6;
  };
  hardware.link_latency_s = seconds(flags.latency_us, "--latency-us");
  hardware.kernel_launch_s = seconds(flags.launch_us, "--launch-us");
  hardware.message.overhead_s = seconds(flags.overhead_us, "--overhead-us");
  hardware.message.nvlink_latency_s = seconds(flags.nvlink_message_us, "--nvlink-message-us");
  hardware.message.network_latency_s = seconds(flags.network_message_us, "--network-message-us");
  return hardware;
}

}  // namespace tessera::scenario
