#pragma once
// The one table of hardware figures every model starts from: the GPUs the simulator knows
// (sim/gpu_profile.hpp), the default GPU and network link of the analytical model
// (costmodel/cost.hpp Hardware), the scenario's defaults (scenario/scenario.hpp, the sweep's
// defaults) and the Mesh planner's (schedules/generators.hpp PlanHardware). Change a figure
// here and every front end moves with it.
#include <array>
#include <string_view>

namespace tessera {

struct GpuPreset {
  std::string_view name;          // as `--gpu` spells it
  double peak_flops_per_s_16bit;  // dense bf16/fp16 tensor-core peak (no sparsity)
  double peak_flops_per_s_fp32;   // dense TF32 tensor-core peak (fp32 inputs)
  double hbm_bytes_per_s;
  // The fraction of peak the analytical model assumes attention kernels reach (`--efficiency`;
  // README: compute). The simulator uses its own efficiency curve instead (GpuProfile).
  double analytical_efficiency;
};

// Vendor data sheets: H100 SXM5 80 GB (989 TFLOP/s bf16 dense, 494 TF32 dense, HBM3 3.35 TB/s);
// H200 SXM (the H100's compute, HBM3e 4.8 TB/s); A100 SXM 80 GB (312 TFLOP/s bf16 dense, 156
// TF32 dense, HBM2e 2.039 TB/s).
inline constexpr GpuPreset kH100{"h100", 989e12, 494e12, 3.35e12, 0.6};
inline constexpr GpuPreset kH200{"h200", 989e12, 494e12, 4.8e12, 0.6};
inline constexpr GpuPreset kA100{"a100", 312e12, 156e12, 2.039e12, 0.6};
inline constexpr std::array<GpuPreset, 3> kGpuPresets = {kH100, kH200, kA100};

// The GPU every default scenario runs on.
inline constexpr GpuPreset kDefaultGpu = kH100;

struct LinkPreset {
  double bytes_per_s;
  double latency_s;
};

// The default network: every GPU pair has a 400 Gb/s InfiniBand link (NDR, one ConnectX-7 NIC per
// GPU: 50 GB/s) of 5 us. The uniform network, the generic topology presets and the Mesh
// planner's defaults all use it, so they can be compared like for like.
inline constexpr LinkPreset kDefaultNetworkLink{50e9, 5e-6};

// Launch cost of one kernel: cuLaunchKernel of an empty kernel measured at 3.0 us
// (meta-pytorch/tritonbench PR #1017, GB200); async enqueue 2.6-2.8 us per launch in
// ahrefs/ocannl issue #488. The analytical model and the simulator's GPU profiles both use it.
inline constexpr double kDefaultKernelLaunchS = 3e-6;

}  // namespace tessera
