#include "tessera/core/calibration_file.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"

namespace tessera {

MessageCosts CalibratedMessageCosts::over(const MessageCosts& base) const {
  MessageCosts costs = base;
  costs.overhead_s = overhead_s.value_or(base.overhead_s);
  costs.nvlink_latency_s = nvlink_latency_s.value_or(base.nvlink_latency_s);
  costs.network_latency_s = network_latency_s.value_or(base.network_latency_s);
  return costs;
}

namespace {

nlohmann::json parse_object(const std::string& path) {
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

// The profile's figures: positive numbers where present.
void read_positive(const nlohmann::json& json, const std::string& path, const char* field, std::optional<double>& target) {
  if (!json.contains(field)) return;
  if (!json[field].is_number() || json[field].get<double>() <= 0)
    throw UserError(path + ": " + field + ": expected a positive number");
  target = json[field].get<double>();
}

CalibratedMessageCosts read_message(const nlohmann::json& message, const std::string& path) {
  if (!message.is_object())
    throw UserError(path + ": message: expected {\"overhead_s\", \"nvlink_latency_s\", \"network_latency_s\"}");
  CalibratedMessageCosts costs;
  auto seconds = [&](const char* field, std::optional<double>& target) {
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

CalibratedLink read_link(const nlohmann::json& link, const std::string& path) {
  if (!link.is_object() || !link.contains("bytes_per_s") || !link["bytes_per_s"].is_number() ||
      !link.contains("latency_s") || !link["latency_s"].is_number() || !(link["bytes_per_s"].get<double>() > 0))
    throw UserError(path + ": link: expected {\"bytes_per_s\": positive number, \"latency_s\": number}");
  // A fitted intercept below zero is noise around no latency at all.
  return {link["bytes_per_s"].get<double>(), std::max(0.0, link["latency_s"].get<double>())};
}

nlohmann::json record_json(const CalibrationRecord& record) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const MeasuredBlock& block : record.blocks)
    blocks.push_back({{"side_tokens", block.side_tokens}, {"flops", block.flops}, {"forward_s", block.forward_s},
                      {"backward_s", block.backward_s}});
  return {{"heads", record.heads},
          {"head_dim", record.head_dim},
          {"dtype", record.dtype},
          {"blocks", blocks},
          {"backward_over_forward", record.backward_over_forward},
          {"largest_block_flops_per_s", record.largest_block_flops_per_s}};
}

}  // namespace

CalibrationFile read_calibration_file(const std::string& path) {
  const nlohmann::json json = parse_object(path);
  CalibrationFile file;
  if (json.contains("gpu")) {
    if (!json["gpu"].is_string()) throw UserError(path + ": gpu: expected the name of a GPU profile");
    file.gpu = json["gpu"].get<std::string>();
  }
  if (json.contains("device")) {
    if (!json["device"].is_string()) throw UserError(path + ": device: expected a string");
    file.device = json["device"].get<std::string>();
  }
  read_positive(json, path, "peak_flops_per_s_16bit", file.peak_flops_per_s_16bit);
  read_positive(json, path, "peak_flops_per_s_fp32", file.peak_flops_per_s_fp32);
  read_positive(json, path, "hbm_bytes_per_s", file.hbm_bytes_per_s);
  read_positive(json, path, "max_efficiency", file.max_efficiency);
  read_positive(json, path, "half_efficiency_tokens", file.half_efficiency_tokens);
  read_positive(json, path, "launch_overhead_s", file.launch_overhead_s);
  read_positive(json, path, "backward_rate_ratio", file.backward_rate_ratio);
  if (file.max_efficiency.value_or(0) > 1) throw UserError(path + ": max_efficiency: must be at most 1");
  if (json.contains("message")) file.message = read_message(json["message"], path);
  if (json.contains("link")) file.link = read_link(json["link"], path);
  return file;
}

void write_calibration_file(const std::string& path, const CalibrationFile& file) {
  nlohmann::json json = {{"gpu", file.gpu}};
  if (file.device) json["device"] = *file.device;
  auto number = [&](const char* field, const std::optional<double>& value) {
    if (value) json[field] = *value;
  };
  number("peak_flops_per_s_16bit", file.peak_flops_per_s_16bit);
  number("peak_flops_per_s_fp32", file.peak_flops_per_s_fp32);
  number("hbm_bytes_per_s", file.hbm_bytes_per_s);
  number("max_efficiency", file.max_efficiency);
  number("half_efficiency_tokens", file.half_efficiency_tokens);
  number("launch_overhead_s", file.launch_overhead_s);
  number("backward_rate_ratio", file.backward_rate_ratio);
  if (file.message) {
    nlohmann::json message = nlohmann::json::object();
    if (file.message->overhead_s) message["overhead_s"] = *file.message->overhead_s;
    if (file.message->nvlink_latency_s) message["nvlink_latency_s"] = *file.message->nvlink_latency_s;
    if (file.message->network_latency_s) message["network_latency_s"] = *file.message->network_latency_s;
    json["message"] = message;
  }
  if (file.link) json["link"] = {{"bytes_per_s", file.link->bytes_per_s}, {"latency_s", file.link->latency_s}};
  if (file.measured) json["measured"] = record_json(*file.measured);
  std::ofstream out(path);
  if (!out) throw UserError(path + ": cannot write the calibration file");
  out << json.dump(2) << "\n";
  if (!out) throw UserError(path + ": writing failed");
}

}  // namespace tessera
