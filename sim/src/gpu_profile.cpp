#include "tessera/sim/gpu_profile.hpp"

#include <cmath>

#include "tessera/core/calibration_file.hpp"
#include "tessera/core/error.hpp"

namespace tessera::sim {

double GpuProfile::efficiency(double query_tokens, double key_tokens) const {
  double side = std::sqrt(std::max(0.0, query_tokens * key_tokens));
  return max_efficiency * side / (side + half_efficiency_tokens);
}

double block_compute_s(const GpuProfile& gpu, DType dtype, Pass pass, double query_tokens, double key_tokens,
                       double visible_flops, double area_flops) {
  const double peak = gpu.peak_flops_per_s(dtype);
  const double rate = pass == Pass::backward ? gpu.backward_rate_ratio : 1.0;
  if (!gpu.block_model) return visible_flops / (peak * gpu.efficiency(query_tokens, key_tokens) * rate) + gpu.launch_overhead_s;
  const double side = std::sqrt(std::max(0.0, query_tokens * key_tokens));
  const bool backward = pass == Pass::backward;
  const GpuProfile::BlockModel& model = *gpu.block_model;
  const double masked_cost = backward ? model.backward_masked_pair_cost : model.forward_masked_pair_cost;
  const double half = backward ? model.backward_half_efficiency_tokens : gpu.half_efficiency_tokens;
  const double pair_flops = visible_flops + masked_cost * std::max(0.0, area_flops - visible_flops);
  const double row_flops = side > 0 ? area_flops * half / side : 0;
  return (pair_flops + row_flops) / (peak * gpu.max_efficiency * rate) + gpu.launch_overhead_s;
}

std::vector<GpuProfile> gpu_profiles() {
  // The vendor figures from the table; the efficiency curve and launch cost are the defaults'.
  std::vector<GpuProfile> profiles;
  for (const GpuPreset& preset : kGpuPresets) {
    GpuProfile profile;
    profile.name = preset.name;
    profile.peak_flops_per_s_16bit = preset.peak_flops_per_s_16bit;
    profile.peak_flops_per_s_fp32 = preset.peak_flops_per_s_fp32;
    profile.hbm_bytes_per_s = preset.hbm_bytes_per_s;
    profiles.push_back(profile);
  }
  return profiles;
}

GpuProfile gpu_profile(const std::string& name) {
  std::string known;
  for (const auto& profile : gpu_profiles()) {
    if (profile.name == name) return profile;
    known += (known.empty() ? "" : ", ") + profile.name;
  }
  throw UserError("unknown GPU '" + name + "' (expected " + known + ", or a calibration file)");
}

// Both read the file through its one reader (core/calibration_file.hpp), which checks it whole.
std::optional<MessageCosts> read_message_calibration(const std::string& path, const MessageCosts& base) {
  const CalibrationFile file = read_calibration_file(path);
  if (!file.message) return std::nullopt;
  return file.message->over(base);
}

std::optional<double> read_launch_calibration(const std::string& path) {
  return read_calibration_file(path).launch_overhead_s;
}

GpuProfile read_calibration(const std::string& path) {
  // The file is read and checked by its one reader (core/calibration_file.hpp); the figures it
  // has replace the named profile's.
  const CalibrationFile file = read_calibration_file(path);
  GpuProfile profile = gpu_profile(file.gpu);
  auto replace = [](const std::optional<double>& measured, double& target) {
    if (measured) target = *measured;
  };
  replace(file.peak_flops_per_s_16bit, profile.peak_flops_per_s_16bit);
  replace(file.peak_flops_per_s_fp32, profile.peak_flops_per_s_fp32);
  replace(file.hbm_bytes_per_s, profile.hbm_bytes_per_s);
  replace(file.max_efficiency, profile.max_efficiency);
  replace(file.half_efficiency_tokens, profile.half_efficiency_tokens);
  replace(file.launch_overhead_s, profile.launch_overhead_s);
  replace(file.backward_rate_ratio, profile.backward_rate_ratio);
  if (file.block_model)
    profile.block_model = GpuProfile::BlockModel{file.block_model->forward_masked_pair_cost, file.block_model->backward_masked_pair_cost,
                                                 file.block_model->backward_half_efficiency_tokens};
  profile.name += " (calibrated)";
  return profile;
}

}  // namespace tessera::sim
