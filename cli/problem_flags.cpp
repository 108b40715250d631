#include "problem_flags.hpp"

#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::cli {

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

void add_problem_flags(CLI::App& app, ProblemFlags& flags) {
  app.add_option("--gpus,-P", flags.gpus, "GPUs in the context-parallel group")->capture_default_str();
  app.add_option("--seq,-N", flags.seq, "sequence length in tokens (suffixes K, M: 128K, 1M)")->capture_default_str();
  app.add_option("--batch", flags.batch, "sequences per batch")->capture_default_str();
  app.add_option("--heads", flags.heads, "query heads H")->capture_default_str();
  app.add_option("--kv-heads", flags.kv_heads, "key/value heads G (G < H: grouped-query attention)")->capture_default_str();
  app.add_option("--head-dim", flags.head_dim, "head dimension d")->capture_default_str();
  app.add_option("--head-dim-v", flags.head_dim_v, "value head dimension (default: --head-dim)");
  app.add_option("--dtype", flags.dtype, "bf16, fp16 or fp32")->capture_default_str();
  app.add_option("--mask", flags.mask, "full, causal, sliding-window or documents")->capture_default_str();
  app.add_option("--window", flags.window, "window in tokens for --mask sliding-window")->capture_default_str();
  app.add_option("--documents", flags.documents, "document lengths for --mask documents, e.g. 512K,256K,256K");
  app.add_option("--layout", flags.layout, "contiguous, zigzag or striped (default: zigzag unless the mask is full)");
  app.add_option("--pass", flags.pass, "forward, backward or both")->capture_default_str();
}

void add_schedule_flags(CLI::App& app, ScheduleFlags& flags, bool algorithm_required) {
  auto* algo = app.add_option("--algo,-a", flags.algorithm, "schedule generator (see `tessera schedules`)");
  if (algorithm_required) algo->required();
  app.add_option("--tile", flags.tile, "mesh: AxB (A query chunks per tile); attention2d: ROWSxCOLS; usp: UxR");
  app.add_option("--variant", flags.variant, "attention2d: collective or ring");
  app.add_option("--input", flags.input, "for --algo file / assignment: the JSON file");
}

void add_hardware_flags(CLI::App& app, HardwareFlags& flags) {
  app.add_option("--peak-tflops", flags.peak_tflops, "GPU peak dense TFLOP/s for the dtype")->capture_default_str();
  app.add_option("--efficiency", flags.efficiency, "fraction of peak attention kernels reach")->capture_default_str();
  app.add_option("--hbm-gbps", flags.hbm_gbps, "GPU memory bandwidth, GB/s (1 GB/s = 1e9 B/s)")->capture_default_str();
  app.add_option("--bandwidth-gbps", flags.bandwidth_gbps, "per-GPU-pair link bandwidth, GB/s (SI)")->capture_default_str();
  app.add_option("--latency-us", flags.latency_us, "per-message link latency, microseconds")->capture_default_str();
}

void add_network_flags(CLI::App& app, NetworkFlags& flags) {
  app.add_option("--topology", flags.topology,
                 "network preset or YAML file (see `tessera topo list`); default: a uniform network");
  app.add_option("--placement", flags.placement, "ranks to GPUs: linear, round-robin, auto, list:3,0,1,2")
      ->capture_default_str();
}

Problem make_problem(const ProblemFlags& flags) {
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

GeneratorOptions make_options(const ProblemFlags& problem, const ScheduleFlags& schedule) {
  GeneratorOptions options;
  int64_t gpus = count_flag(problem.gpus, "--gpus");
  if (gpus < 1 || gpus > (1 << 20)) throw UserError("--gpus: expected 1 to 1048576 GPUs, got " + problem.gpus);
  options.gpus = static_cast<int32_t>(gpus);
  if (!problem.layout.empty()) options.layout = enum_flag(problem.layout, "--layout", parse_layout);
  if (!schedule.tile.empty()) options.tile = enum_flag(schedule.tile, "--tile", parse_tile);
  options.variant = schedule.variant;
  options.input_path = schedule.input;
  return options;
}

Hardware make_hardware(const HardwareFlags& flags) {
  auto positive = [](double value, const char* flag) {
    if (!(value > 0)) throw UserError(std::string(flag) + ": must be positive");
    return value;
  };
  Hardware hardware;
  hardware.peak_flops_per_s = positive(flags.peak_tflops, "--peak-tflops") * 1e12;
  hardware.compute_efficiency = positive(flags.efficiency, "--efficiency");
  if (hardware.compute_efficiency > 1) throw UserError("--efficiency: must be at most 1");
  hardware.hbm_bytes_per_s = positive(flags.hbm_gbps, "--hbm-gbps") * 1e9;
  hardware.link_bytes_per_s = positive(flags.bandwidth_gbps, "--bandwidth-gbps") * 1e9;
  if (flags.latency_us < 0) throw UserError("--latency-us: must not be negative");
  hardware.link_latency_s = flags.latency_us * 1e-6;
  return hardware;
}

}  // namespace tessera::cli
