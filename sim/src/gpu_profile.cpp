#include "tessera/sim/gpu_profile.hpp"

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"

namespace tessera::sim {

double GpuProfile::efficiency(double query_tokens, double key_tokens) const {
  double side = std::sqrt(std::max(0.0, query_tokens * key_tokens));
  return max_efficiency * side / (side + half_efficiency_tokens);
}

std::vector<GpuProfile> gpu_profiles() {
  GpuProfile h100;
  GpuProfile h200 = h100;
  h200.name = "h200";
  h200.hbm_bytes_per_s = 4.8e12;
  GpuProfile a100 = h100;
  a100.name = "a100";
  a100.peak_flops_per_s_16bit = 312e12;
  a100.peak_flops_per_s_fp32 = 156e12;
  a100.hbm_bytes_per_s = 2.039e12;
  return {h100, h200, a100};
}

GpuProfile gpu_profile(const std::string& name) {
  std::string known;
  for (const auto& profile : gpu_profiles()) {
    if (profile.name == name) return profile;
    known += (known.empty() ? "" : ", ") + profile.name;
  }
  throw UserError("unknown GPU '" + name + "' (expected " + known + ", or a calibration file)");
}

namespace {
nlohmann::json read_calibration_json(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UserError(path + ": cannot open the calibration file");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(file);
  } catch (const nlohmann::json::parse_error& error) {
    throw UserError(path + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  if (!json.is_object()) throw UserError(path + ": expected a JSON object");
  return json;
}
}  // namespace

std::optional<MessageCosts> read_message_calibration(const std::string& path, const MessageCosts& base) {
  const nlohmann::json json = read_calibration_json(path);
  if (!json.contains("message")) return std::nullopt;
  const nlohmann::json& message = json["message"];
  if (!message.is_object())
    throw UserError(path + ": message: expected {\"overhead_s\", \"nvlink_latency_s\", \"network_latency_s\"}");
  MessageCosts costs = base;
  auto seconds = [&](const char* field, double& target) {
    if (!message.contains(field)) return;
    if (!message[field].is_number() || !(message[field].get<double>() >= 0))
      throw UserError(path + ": message." + field + ": expected a number of seconds >= 0");
    target = message[field].get<double>();
  };
  seconds("overhead_s", costs.overhead_s);
  seconds("nvlink_latency_s", costs.nvlink_latency_s);
  seconds("network_latency_s", costs.network_latency_s);
  return costs;
}

std::optional<double> read_launch_calibration(const std::string& path) {
  // read_calibration checks the value; here only whether the file has one.
  const nlohmann::json json = read_calibration_json(path);
  if (!json.contains("launch_overhead_s") || !json["launch_overhead_s"].is_number()) return std::nullopt;
  return json["launch_overhead_s"].get<double>();
}

GpuProfile read_calibration(const std::string& path) {
  const nlohmann::json json = read_calibration_json(path);
  GpuProfile profile = gpu_profile(json.value("gpu", std::string("h100")));
  auto number = [&](const char* field, double& target) {
    if (!json.contains(field)) return;
    if (!json[field].is_number() || json[field].get<double>() <= 0)
      throw UserError(path + ": " + field + ": expected a positive number");
    target = json[field].get<double>();
  };
  number("peak_flops_per_s_16bit", profile.peak_flops_per_s_16bit);
  number("peak_flops_per_s_fp32", profile.peak_flops_per_s_fp32);
  number("hbm_bytes_per_s", profile.hbm_bytes_per_s);
  number("max_efficiency", profile.max_efficiency);
  number("half_efficiency_tokens", profile.half_efficiency_tokens);
  number("launch_overhead_s", profile.launch_overhead_s);
  number("backward_rate_ratio", profile.backward_rate_ratio);
  if (profile.max_efficiency > 1) throw UserError(path + ": max_efficiency: must be at most 1");
  profile.name += " (calibrated)";
  return profile;
}

}  // namespace tessera::sim
