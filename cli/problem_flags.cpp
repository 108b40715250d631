#include "problem_flags.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "tessera/core/deprecation.hpp"
#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/units.hpp"

namespace tessera::cli {

namespace {

// A deprecated flag that takes a bare number of GB/s in place of `replacement`'s bandwidth with
// a unit. Giving both is an error; using it prints a note once, only where the run goes on (a
// value make_hardware accepts, the replacement not given), so an error stays the one line on stderr.
void add_deprecated_gbps_flag(CLI::App& app, const std::string& name, double& gbps, CLI::Option* replacement) {
  const std::string instead = replacement->get_name();
  app.add_option(name, gbps, "deprecated: a number of GB/s (bytes); use " + instead)
      ->group("Deprecated")
      ->excludes(replacement)
      ->each([name, instead, replacement](const std::string& text) {
        const double given_gbps = is_bare_number(text) ? std::strtod(text.c_str(), nullptr) : 0;
        const double bytes_per_s = given_gbps * kBytesPerSecondPerGBps;
        if (!(bytes_per_s >= kMinBandwidthBytesPerS && bytes_per_s <= kMaxBandwidthBytesPerS) ||
            replacement->count() > 0)
          return;
        char gigabits[32];
        std::snprintf(gigabits, sizeof gigabits, "%.15g", given_gbps * 8);
        note_deprecated("flag:" + name, name + " is deprecated (a number of GB/s, bytes); write " + instead + " " +
                                            text + "GB/s (or " + gigabits + "Gb/s in bits)");
      });
}

}  // namespace

void add_problem_flags(CLI::App& app, ProblemFlags& flags) {
  app.add_option("--gpus,-P", flags.gpus, "GPUs in the context-parallel group (default with --topology: the topology's GPU count where it names one)")->capture_default_str();
  app.add_option("--seq,-N", flags.seq, "sequence length in tokens, at most 2^31 (K, M, G: powers of 1024; 128K = 131072)")->capture_default_str();
  app.add_option("--batch", flags.batch, "sequences per batch")->capture_default_str();
  app.add_option("--heads", flags.heads, "query heads H")->capture_default_str();
  app.add_option("--kv-heads", flags.kv_heads, "key/value heads G (G < H: grouped-query attention)")->capture_default_str();
  app.add_option("--head-dim", flags.head_dim, "head dimension d")->capture_default_str();
  app.add_option("--head-dim-v", flags.head_dim_v, "value head dimension (default: --head-dim)");
  app.add_option("--dtype", flags.dtype, "bf16, fp16 or fp32")->capture_default_str();
  app.add_option("--mask", flags.mask, "full, causal, sliding-window or documents")->capture_default_str();
  app.add_option("--window", flags.window, "window in tokens for --mask sliding-window (4K = 4096)")->capture_default_str();
  app.add_option("--documents", flags.documents, "document lengths in tokens for --mask documents, summing to --seq, e.g. 512K,256K,256K");
  app.add_option("--layout", flags.layout, "contiguous, zigzag or striped (default: zigzag unless the mask is full)");
  app.add_option("--pass", flags.pass, "forward, backward or both")->capture_default_str();
  app.add_option("--buffers", flags.buffers,
                 "remote-chunk buffers per receive stream of a ring (2: double buffering, as production "
                 "implementations; 0: unbounded run-ahead)")
      ->capture_default_str();
}

void add_schedule_flags(CLI::App& app, ScheduleFlags& flags, bool algorithm_required) {
  auto* algo = app.add_option("--algo,-a", flags.algorithm, "schedule generator (see `tessera schedules`)");
  if (algorithm_required) algo->required();
  app.add_option("--tile", flags.tile, "mesh: AxB (A query chunks per tile); attention2d: ROWSxCOLS; usp: UxR");
  app.add_option("--variant", flags.variant, "attention2d: collective or ring; ring: pass-kv or pass-q; mesh: greedy, ring-order, receives-first or optimal (small tiles)");
  app.add_option("--input", flags.input, "for --algo file / assignment: the JSON file");
}

void add_hardware_flags(CLI::App& app, HardwareFlags& flags) {
  app.add_option("--peak-tflops", flags.peak_tflops, "GPU peak dense TFLOP/s for the dtype (1e-6 to 1e6)")->capture_default_str();
  app.add_option("--efficiency", flags.efficiency, "fraction of peak attention kernels reach (1e-6 to 1)")->capture_default_str();
  // Bandwidths carry their unit (core/units.hpp); the GB/s-number flags they replace still work,
  // hidden from the help, with a note.
  auto* hbm = app.add_option("--hbm-bandwidth", flags.hbm_bandwidth,
                             "GPU memory bandwidth with its unit, e.g. 3.35TB/s (default: " +
                                 format_bandwidth(kDefaultGpu.hbm_bytes_per_s) + ")");
  auto* link = app.add_option("--bandwidth", flags.bandwidth,
                              "per-GPU-pair link bandwidth with its unit: 400Gb/s (bits) or 50GB/s (bytes) (default: " +
                                  format_bandwidth(kDefaultNetworkLink.bytes_per_s) + ")");
  add_deprecated_gbps_flag(app, "--hbm-gbps", flags.hbm_gbps, hbm);
  add_deprecated_gbps_flag(app, "--bandwidth-gbps", flags.bandwidth_gbps, link);
  app.add_option("--latency-us", flags.latency_us, "per-message link latency, microseconds (0 to 1e6)")->capture_default_str();
  // Per-kernel and per-message costs, on by default (README: What the simulation assumes).
  app.add_option("--launch-us", flags.launch_us,
                 "launch cost of each block kernel, microseconds, 0 to 1e6 (simulate: unless --calibration gives one)")
      ->capture_default_str();
  app.add_option("--overhead-us", flags.overhead_us, "NCCL overhead per point-to-point message, microseconds, 0 (none) to 1e6")
      ->capture_default_str();
  app.add_option("--nvlink-message-us", flags.nvlink_message_us,
                 "NCCL latency per message on an all-NVLink path, microseconds (0 to 1e6)")
      ->capture_default_str();
  app.add_option("--network-message-us", flags.network_message_us,
                 "NCCL latency per message on a path leaving the server (or the uniform network), microseconds (0 to 1e6)")
      ->capture_default_str();
}

void add_network_flags(CLI::App& app, NetworkFlags& flags) {
  app.add_option("--topology", flags.topology,
                 "network preset or YAML file (see `tessera topo list`); default: a uniform network");
  app.add_option("--placement", flags.placement,
                 "ranks to GPUs: linear, round-robin, rail-aligned[:S], packed:K, stride:T+ORDER, list:3,0,1,2, or "
                 "auto (per schedule: the order with the least loaded busiest link)")
      ->capture_default_str();
  app.add_option("--routing", flags.routing,
                 "routes between servers: pxn (NCCL's PXN: leave through the NIC on the destination's rail; the "
                 "default on rail-optimised clusters) or ecmp (own NIC, hashed over the spines)");
}

void gpus_from_topology(const CLI::App& command, ProblemFlags& problem, const NetworkFlags& network) {
  const CLI::Option* topology = command.get_option_no_throw("--topology");
  const CLI::Option* gpus = command.get_option_no_throw("--gpus");
  if (topology == nullptr || gpus == nullptr || topology->count() == 0 || gpus->count() > 0) return;
  const CLI::Option* algorithm = command.get_option_no_throw("--algo");
  if (algorithm != nullptr && algorithm->count() > 0 && algorithm->as<std::string>() == "file") return;
  if (const std::optional<int32_t> count = scenario::topology_gpu_count(network)) problem.gpus = std::to_string(*count);
}

}  // namespace tessera::cli
