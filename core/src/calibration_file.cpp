#include "tessera/core/calibration_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"

namespace tessera {

MessageCosts CalibratedMessageCosts::over(const MessageCosts& base) const {
  MessageCosts costs = base;
  costs.overhead_s = overhead_s.value_or(base.overhead_s);
  costs.nvlink_latency_s = nvlink_latency_s.value_or(base.nvlink_latency_s);
  costs.network_latency_s = network_latency_s.value_or(base.network_latency_s);
  return costs;
}

namespace {

using nlohmann::json;

// A field's plausible range (calibration_file.hpp states them): a value outside is a broken
// measurement, refused here rather than turned into a simulation of 10^30 seconds.
struct Range {
  double min, max;
  bool min_inclusive = true;
};

constexpr Range kFlopsPerS{1e6, 1e18};
constexpr Range kBytesPerS{1e6, 1e15};
constexpr Range kEfficiency{1e-3, 1.0};
constexpr Range kHalfEfficiencyTokens{0, 1e6, false};
constexpr Range kRateRatio{1e-3, 1e3};
constexpr Range kMaskedPairCost{0, 1e3};
constexpr Range kBackwardHalfTokens{0, 1e6};
constexpr Range kSeconds{0, 1.0};  // below one second: a launch or a message that takes longer is no measurement
constexpr Range kFittedLatencyS{-1.0, 1.0};  // a fit may land a little below zero (read as 0)

std::string shown(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

double in_range(const JsonReader& reader, const json& value, const std::string& path, const Range& range) {
  const double number = reader.number(value, path);
  const bool above_min = range.min_inclusive ? number >= range.min : number > range.min;
  if (!above_min || number > range.max)
    reader.fail(path, "expected a number from " + shown(range.min) + (range.min_inclusive ? "" : " (exclusive)") +
                          " to " + shown(range.max) + ", got " + shown(number));
  return number;
}

void read_optional(const JsonReader& reader, const json& object, const std::string& path, const std::string& key,
                   const Range& range, std::optional<double>& target) {
  if (JsonReader::has(object, key)) target = in_range(reader, object.at(key), JsonReader::path_of(path, key), range);
}

// A misspelt field would silently leave the profile's figure: every key must be known.
void require_known_keys(const JsonReader& reader, const json& object, const std::string& path,
                        const std::vector<std::string>& known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string list;
    for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
    reader.fail(JsonReader::path_of(path, it.key()), "unknown field (expected one of " + list + ")");
  }
}

std::string gpu_names() {
  std::string names;
  for (const GpuPreset& preset : kGpuPresets) names += (names.empty() ? "" : ", ") + std::string(preset.name);
  return names;
}

CalibratedMessageCosts read_message(const JsonReader& reader, const json& message) {
  reader.object(message, "message");
  require_known_keys(reader, message, "message", {"overhead_s", "nvlink_latency_s", "network_latency_s"});
  CalibratedMessageCosts costs;
  read_optional(reader, message, "message", "overhead_s", kSeconds, costs.overhead_s);
  read_optional(reader, message, "message", "nvlink_latency_s", kSeconds, costs.nvlink_latency_s);
  read_optional(reader, message, "message", "network_latency_s", kSeconds, costs.network_latency_s);
  return costs;
}

CalibratedLink read_link(const JsonReader& reader, const json& link, const std::string& name = "link") {
  reader.object(link, name);
  require_known_keys(reader, link, name, {"bytes_per_s", "latency_s"});
  const double bytes_per_s =
      in_range(reader, reader.field(link, name, "bytes_per_s"), name + ".bytes_per_s", kBytesPerS);
  const double latency_s =
      in_range(reader, reader.field(link, name, "latency_s"), name + ".latency_s", kFittedLatencyS);
  // A fitted intercept below zero is noise around no latency at all.
  return {bytes_per_s, std::max(0.0, latency_s)};
}

CalibratedBlockModel read_block_model(const JsonReader& reader, const json& model) {
  const std::string name = "block_model";
  reader.object(model, name);
  require_known_keys(reader, model, name,
                     {"forward_masked_pair_cost", "backward_masked_pair_cost", "backward_half_efficiency_tokens"});
  auto field = [&](const char* key, const Range& range) {
    return in_range(reader, reader.field(model, name, key), name + "." + key, range);
  };
  return {field("forward_masked_pair_cost", kMaskedPairCost), field("backward_masked_pair_cost", kMaskedPairCost),
          field("backward_half_efficiency_tokens", kBackwardHalfTokens)};
}

CalibratedSharing read_sharing(const JsonReader& reader, const json& sharing) {
  reader.object(sharing, "sharing");
  require_known_keys(reader, sharing, "sharing", {"concurrency_speedup", "devices_speedup", "copy_bytes_per_s"});
  CalibratedSharing result;
  // A speedup curve: 1 to 64 values, each 1e-3 to 1e6, the first 1.
  auto curve_of = [&](const std::string& key, const std::string& meaning, std::vector<double>& into) {
    if (!JsonReader::has(sharing, key)) return;
    const json& curve = sharing.at(key);
    const std::string path = "sharing." + key;
    if (!curve.is_array() || curve.empty() || curve.size() > 64)
      reader.fail(path, "expected an array of 1 to 64 numbers (throughput of k " + meaning + " over one's)");
    constexpr Range kSpeedup{1e-3, 1e6};
    for (size_t k = 0; k < curve.size(); ++k) into.push_back(in_range(reader, curve[k], path + "[" + std::to_string(k) + "]", kSpeedup));
    if (into[0] != 1) reader.fail(path + "[0]", "expected 1 (one's throughput over itself)");
  };
  curve_of("concurrency_speedup", "concurrent blocks", result.concurrency_speedup);
  curve_of("devices_speedup", "busy devices", result.devices_speedup);
  read_optional(reader, sharing, "sharing", "copy_bytes_per_s", kBytesPerS, result.copy_bytes_per_s);
  return result;
}

CalibratedSpeedReference read_speed_reference(const JsonReader& reader, const json& reference) {
  const std::string name = "speed_reference";
  reader.object(reference, name);
  require_known_keys(reader, reference, name,
                     {"side_tokens", "heads", "head_dim", "dtype", "block_s", "devices", "alone_s", "devices_s"});
  constexpr Range kCount{1, 1e6};
  constexpr Range kReferenceSeconds{0, 100, false};
  constexpr Range kDevices{1, 4096};
  auto field = [&](const char* key, const Range& range) {
    return in_range(reader, reader.field(reference, name, key), name + "." + key, range);
  };
  auto whole = [&](const char* key, const Range& range) {
    const double value = field(key, range);
    if (value != std::floor(value)) reader.fail(name + "." + key, "expected a whole number, got " + shown(value));
    return static_cast<int64_t>(value);
  };
  CalibratedSpeedReference result;
  result.side_tokens = whole("side_tokens", kCount);
  result.heads = whole("heads", kCount);
  result.head_dim = whole("head_dim", kCount);
  result.dtype = reader.text(reader.field(reference, name, "dtype"), name + ".dtype");
  if (result.dtype != "fp32" && result.dtype != "bf16" && result.dtype != "fp16")
    reader.fail(name + ".dtype", "expected fp32, bf16 or fp16, got " + tessera::quoted(result.dtype));
  result.times.block_s = field("block_s", kReferenceSeconds);
  result.devices = static_cast<int32_t>(whole("devices", kDevices));
  const bool has_alone = JsonReader::has(reference, "alone_s"), has_devices = JsonReader::has(reference, "devices_s");
  if (result.devices == 1 && (has_alone || has_devices))
    reader.fail(name + (has_alone ? ".alone_s" : ".devices_s"), "expected only where devices is 2 or more (devices is 1)");
  if (result.devices > 1) {
    result.times.alone_s = field("alone_s", kReferenceSeconds);
    result.times.devices_s = field("devices_s", kReferenceSeconds);
  }
  return result;
}

nlohmann::json spread_json(const CalibrationSpread& spread) {
  auto figure = [](const FigureSpread& one) {
    return nlohmann::json{{"interquartile", one.interquartile}, {"full_range", one.full_range}};
  };
  return {{"blocks", figure(spread.blocks)},
          {"merges", figure(spread.merges)},
          {"busy_devices", figure(spread.busy_devices)},
          {"concurrency", figure(spread.concurrency)}};
}

nlohmann::json record_json(const CalibrationRecord& record) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const MeasuredBlock& block : record.blocks)
    blocks.push_back({{"side_tokens", block.side_tokens}, {"flops", block.flops}, {"forward_s", block.forward_s},
                      {"backward_s", block.backward_s}, {"diagonal_forward_s", block.diagonal_forward_s},
                      {"diagonal_backward_s", block.diagonal_backward_s}});
  nlohmann::json json = {{"heads", record.heads},
          {"head_dim", record.head_dim},
          {"dtype", record.dtype},
          {"blocks", blocks},
          {"backward_over_forward", record.backward_over_forward},
          {"largest_block_flops_per_s", record.largest_block_flops_per_s},
          {"spread", record.spread},
          {"spread_by_figure", spread_json(record.spread_by_figure)},
          {"block_timing_spreads", record.block_timing_spreads}};
  if (record.concurrency_side_tokens > 0) json["concurrency_side_tokens"] = record.concurrency_side_tokens;
  return json;
}

// The file's figures from its JSON; `source` names it in every message.
CalibrationFile calibration_from_json(const json& document, const std::string& source) {
  const JsonReader reader(source);
  if (!document.is_object()) reader.fail("", std::string("expected a JSON object, got ") + document.type_name());
  require_known_keys(reader, document, "",
                     {"gpu", "device", "peak_flops_per_s_16bit", "peak_flops_per_s_fp32", "hbm_bytes_per_s",
                      "max_efficiency", "half_efficiency_tokens", "launch_overhead_s", "backward_rate_ratio",
                      "block_model", "message", "link", "intra_node_link", "inter_node_link", "sharing", "speed_reference", "measured"});
  CalibrationFile file;
  if (JsonReader::has(document, "gpu")) {
    const json& gpu = document.at("gpu");
    if (!gpu.is_string()) reader.fail("gpu", std::string("expected the name of a GPU profile (") + gpu_names() +
                                                 "), got " + gpu.type_name());
    file.gpu = gpu.get<std::string>();
    const bool known = std::any_of(kGpuPresets.begin(), kGpuPresets.end(),
                                   [&](const GpuPreset& preset) { return preset.name == file.gpu; });
    if (!known) reader.fail("gpu", "unknown GPU profile " + tessera::quoted(file.gpu) + " (expected " + gpu_names() + ")");
  }
  if (JsonReader::has(document, "device")) file.device = reader.text(document.at("device"), "device");
  read_optional(reader, document, "", "peak_flops_per_s_16bit", kFlopsPerS, file.peak_flops_per_s_16bit);
  read_optional(reader, document, "", "peak_flops_per_s_fp32", kFlopsPerS, file.peak_flops_per_s_fp32);
  read_optional(reader, document, "", "hbm_bytes_per_s", kBytesPerS, file.hbm_bytes_per_s);
  read_optional(reader, document, "", "max_efficiency", kEfficiency, file.max_efficiency);
  read_optional(reader, document, "", "half_efficiency_tokens", kHalfEfficiencyTokens, file.half_efficiency_tokens);
  read_optional(reader, document, "", "launch_overhead_s", kSeconds, file.launch_overhead_s);
  read_optional(reader, document, "", "backward_rate_ratio", kRateRatio, file.backward_rate_ratio);
  if (JsonReader::has(document, "block_model")) file.block_model = read_block_model(reader, document.at("block_model"));
  if (JsonReader::has(document, "message")) file.message = read_message(reader, document.at("message"));
  if (JsonReader::has(document, "link")) file.link = read_link(reader, document.at("link"));
  for (const auto& [key, target] : {std::pair{"intra_node_link", &file.intra_node_link},
                                    std::pair{"inter_node_link", &file.inter_node_link}})
    if (JsonReader::has(document, key)) *target = read_link(reader, document.at(key), key);
  if (JsonReader::has(document, "sharing")) file.sharing = read_sharing(reader, document.at("sharing"));
  if (JsonReader::has(document, "speed_reference"))
    file.speed_reference = read_speed_reference(reader, document.at("speed_reference"));
  // "measured" is the record of the fit, written for people: any JSON is accepted, none is read.
  return file;
}

}  // namespace

CalibrationFile read_calibration_file(const std::string& path) {
  return calibration_from_json(read_json_file(path, "calibration file"), path);
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
  if (file.block_model)
    json["block_model"] = {{"forward_masked_pair_cost", file.block_model->forward_masked_pair_cost},
                           {"backward_masked_pair_cost", file.block_model->backward_masked_pair_cost},
                           {"backward_half_efficiency_tokens", file.block_model->backward_half_efficiency_tokens}};
  if (file.message) {
    nlohmann::json message = nlohmann::json::object();
    if (file.message->overhead_s) message["overhead_s"] = *file.message->overhead_s;
    if (file.message->nvlink_latency_s) message["nvlink_latency_s"] = *file.message->nvlink_latency_s;
    if (file.message->network_latency_s) message["network_latency_s"] = *file.message->network_latency_s;
    json["message"] = message;
  }
  for (const auto& [key, link] : {std::pair{"link", &file.link}, std::pair{"intra_node_link", &file.intra_node_link},
                                   std::pair{"inter_node_link", &file.inter_node_link}})
    if (*link) json[key] = {{"bytes_per_s", (*link)->bytes_per_s}, {"latency_s", (*link)->latency_s}};
  if (file.sharing) {
    nlohmann::json sharing = nlohmann::json::object();
    if (!file.sharing->concurrency_speedup.empty()) sharing["concurrency_speedup"] = file.sharing->concurrency_speedup;
    if (!file.sharing->devices_speedup.empty()) sharing["devices_speedup"] = file.sharing->devices_speedup;
    if (file.sharing->copy_bytes_per_s) sharing["copy_bytes_per_s"] = *file.sharing->copy_bytes_per_s;
    json["sharing"] = sharing;
  }
  if (file.speed_reference) {
    const CalibratedSpeedReference& reference = *file.speed_reference;
    nlohmann::json object = {{"side_tokens", reference.side_tokens}, {"heads", reference.heads},
                             {"head_dim", reference.head_dim}, {"dtype", reference.dtype},
                             {"block_s", reference.times.block_s}, {"devices", reference.devices}};
    if (reference.devices > 1) {
      object["alone_s"] = reference.times.alone_s;
      object["devices_s"] = reference.times.devices_s;
    }
    json["speed_reference"] = object;
  }
  if (file.measured) json["measured"] = record_json(*file.measured);
  // Never write a file the reader would refuse: a fit that lands outside the accepted ranges (noisy
  // timings) is reported now, naming the field, rather than when the file is next used.
  calibration_from_json(json, path + " (the fitted figures; more --repeats or larger --sides may steady them)");
  std::ofstream out(path);
  if (!out) throw UserError(path + ": cannot write the calibration file");
  out << json_text(json, 2) << "\n";
  out.flush();
  if (!out) throw UserError(path + ": writing the calibration file failed (disk full?)");
}

}  // namespace tessera
