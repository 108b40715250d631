#pragma once
// GPU compute model: block time = FLOPs / (peak x efficiency(block)) + launch overhead, with
// efficiency rising with block size (small blocks cannot fill the GPU); merges are memory
// bound (bytes / HBM bandwidth). Profiles hold vendor peak figures; a calibration file written
// by the backend (`tessera calibrate`) replaces them with measured ones.
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/core/network_model.hpp"

namespace tessera::sim {

struct GpuProfile {
  // The default GPU's vendor figures (core/hardware_presets.hpp names the sources).
  std::string name{kDefaultGpu.name};
  double peak_flops_per_s_16bit = kDefaultGpu.peak_flops_per_s_16bit;  // dense bf16/fp16 tensor-core peak
  double peak_flops_per_s_fp32 = kDefaultGpu.peak_flops_per_s_fp32;    // TF32 tensor-core peak (fp32 inputs)
  double hbm_bytes_per_s = kDefaultGpu.hbm_bytes_per_s;
  double max_efficiency = 0.7;             // fraction of peak a large attention block reaches
  double half_efficiency_tokens = 256;     // block side (sqrt(rows x cols)) at half of max_efficiency
  double launch_overhead_s = kDefaultKernelLaunchS;  // per block kernel (hardware_presets.hpp names the source)
  // Backward blocks' FLOP rate relative to forward blocks' (their FLOPs are 2.5x forward's;
  // kernels differ in how well they run). Vendor profiles assume the same rate.
  double backward_rate_ratio = 1.0;
  // The blocks of an executor that visits every (query, key) pair of a block, as a calibration
  // measured them (the CPU executor tests each pair against the mask): a masked pair costs
  // `*_masked_pair_cost` times a visible pair's time, and the per-row work of the efficiency
  // curve is the whole block's, masked or not (backward with its own half-efficiency side):
  //   time = (F(visible) + cost x F(masked)) / peak' + F(area) x half / (peak' x side) + launch,
  // with peak' = peak x max_efficiency (x backward_rate_ratio backward), side = sqrt(rows x cols)
  // and F(n) the FLOPs of n pairs. For a full forward block this is the efficiency model below.
  // Absent (vendor profiles): a block costs its visible pairs' FLOPs at its efficiency, as a
  // kernel skipping masked work does.
  struct BlockModel {
    double forward_masked_pair_cost = 0, backward_masked_pair_cost = 0;
    double backward_half_efficiency_tokens = 0;
  };
  std::optional<BlockModel> block_model;

  double peak_flops_per_s(DType dtype) const {
    return dtype == DType::fp32 ? peak_flops_per_s_fp32 : peak_flops_per_s_16bit;
  }
  // Efficiency of a block of `query_tokens` x `key_tokens`.
  double efficiency(double query_tokens, double key_tokens) const;
  // The FLOP rate of a block of chunk_tokens x chunk_tokens (what a planner weighs blocks by).
  double block_flops_per_s(DType dtype, double chunk_tokens) const {
    return peak_flops_per_s(dtype) * efficiency(chunk_tokens, chunk_tokens);
  }
};

// Seconds of one block of `query_tokens` x `key_tokens` in `pass` (forward or backward), whose
// unmasked pairs come to `visible_flops` and whose every pair would come to `area_flops` (all
// heads of the block): the compute model above.
double block_compute_s(const GpuProfile& gpu, DType dtype, Pass pass, double query_tokens, double key_tokens,
                       double visible_flops, double area_flops);

// One profile per GPU of core/hardware_presets.hpp: "h100" (H100 SXM: 989 TFLOP/s bf16 dense,
// 3.35 TB/s), "h200" (989 TFLOP/s, 4.8 TB/s), "a100" (A100 SXM 80 GB: 312 TFLOP/s, 2.04 TB/s).
std::vector<GpuProfile> gpu_profiles();
GpuProfile gpu_profile(const std::string& name);  // UserError listing the known ones

// A calibration JSON: {"gpu": "h100", "peak_flops_per_s_16bit": ..., "max_efficiency": ...,
// "half_efficiency_tokens": ..., "launch_overhead_s": ..., "hbm_bytes_per_s": ...,
// "backward_rate_ratio": ...}; fields
// present replace the profile's. Errors name the file and the field.
GpuProfile read_calibration(const std::string& path);

// The per-message costs a calibration file measured, when it has them:
// {"message": {"overhead_s": ..., "nvlink_latency_s": ..., "network_latency_s": ...}}; fields
// present replace those of `base` (by default NCCL's, network_model.hpp), e.g. with nccl-tests
// sendrecv_perf latencies of the cluster. nullopt without a "message" object. Errors name the
// file and the field.
std::optional<MessageCosts> read_message_calibration(const std::string& path, const MessageCosts& base = {});
// The kernel launch a calibration file measured ("launch_overhead_s"), when it has one.
std::optional<double> read_launch_calibration(const std::string& path);

}  // namespace tessera::sim
