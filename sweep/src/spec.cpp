// Reading a sweep spec. The YAML reading and its "FILE:LINE: what (expected)" errors are the
// topology files' (tessera/core/yaml_reader.hpp), so both formats read and fail alike.
#include "tessera/sweep/spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "file_io.hpp"
#include "tessera/core/deprecation.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/layout.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/core/units.hpp"
#include "tessera/core/yaml_reader.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/scenario/network.hpp"     // topo::load_topology
#include "tessera/scenario/scenario.hpp"
#include "tessera/scenario/simulation.hpp"  // sim::gpu_profile

namespace tessera::sweep {

using schedules::list_generators;

namespace {

struct FieldInfo {
  std::string name;
  std::string fallback;  // the command line's default
};

// A default number as a person types it: up to 15 significant digits, so 8.4e-6 s in
// microseconds (8.399999999999999) reads 8.4, as it always has.
std::string typed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

// The defaults of `tessera cost` / `tessera simulate` (scenario::ProblemText and
// HardwareValues, the GPU of core/hardware_presets.hpp): 256 GPUs, 1M tokens, ..., an H100 at
// 60 % of 989 TFLOP/s, 3350 GB/s of HBM, 50 GB/s and 5 us links, NCCL's 8.4 us per message
// (overhead_us; 0 = none). The sweep's own: fidelity analytic, channels 0 (unlimited).
const std::array<FieldInfo, kFieldCount>& fields() {
  static const std::array<FieldInfo, kFieldCount> table = [] {
    const scenario::ProblemText problem;
    const scenario::NetworkText network;
    const scenario::HardwareValues hardware;
    return std::array<FieldInfo, kFieldCount>{{
        {"gpus", problem.gpus},
        {"seq", problem.seq},
        {"batch", problem.batch},
        {"heads", problem.heads},
        {"kv_heads", problem.kv_heads},
        {"head_dim", problem.head_dim},
        {"head_dim_v", problem.head_dim_v},
        {"dtype", problem.dtype},
        {"mask", problem.mask},
        {"window", problem.window},
        {"documents", problem.documents},
        {"layout", problem.layout},
        {"pass", problem.pass},
        {"algo", ""},
        {"tile", ""},
        {"variant", ""},
        {"topology", network.topology},
        {"placement", network.placement},
        {"fidelity", "analytic"},
        {"gpu", std::string(kDefaultGpu.name)},
        {"peak_tflops", typed(hardware.peak_tflops)},
        {"efficiency", typed(hardware.efficiency)},
        {"hbm_gbps", typed(hardware.hbm_gbps)},
        {"bandwidth_gbps", typed(hardware.bandwidth_gbps)},
        {"latency_us", typed(hardware.latency_us)},
        {"channels", "0"},
        {"overhead_us", typed(hardware.overhead_us)},
        {"chunk", ""},
    }};
  }();
  return table;
}

// Keys that give a bandwidth with its unit (core/units.hpp) for a field whose column holds GB/s.
struct UnitKey {
  const char* name;
  Field field;
};
constexpr std::array<UnitKey, 2> kUnitKeys = {
    {{"bandwidth", Field::bandwidth_gbps}, {"hbm_bandwidth", Field::hbm_gbps}}};

const UnitKey* unit_key(const std::string& name) {
  for (const UnitKey& key : kUnitKeys)
    if (name == key.name) return &key;
  return nullptr;
}

std::string unit_key_of(Field field) {
  for (const UnitKey& key : kUnitKeys)
    if (key.field == field) return key.name;
  return field_name(field);
}

// A bandwidth with its unit as the GB/s number its column holds: the shortest text whose number
// times 1e9 (what the evaluation multiplies by) is that bandwidth again, to the last bit
// ("400Gb/s" -> "50", "3.35TB/s" -> "3350").
std::string gbps_text(const std::string& value) {
  const double bytes_per_s = parse_bandwidth_bytes_per_s(value, "--bandwidth");  // without_flag drops the flag
  if (!std::isfinite(bytes_per_s)) throw UserError(tessera::quoted(value) + " is not a finite bandwidth");
  const double gbps = bytes_per_s / kBytesPerSecondPerGBps;
  for (const double candidate : {gbps, std::nextafter(gbps, 0.0), std::nextafter(gbps, HUGE_VAL)}) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, candidate).ptr;
    const std::string shortest(text, end);
    if (std::stod(shortest) * kBytesPerSecondPerGBps == bytes_per_s) return shortest;
  }
  return typed(gbps);  // no GB/s double gives it back exactly; the nearest
}

// The note for a bandwidth given the deprecated way, a number of GB/s under the column's name
// (`where` is FILE:LINE), once per field per run.
void note_gbps_field(const std::string& where, Field field, const std::string& value) {
  for (const UnitKey& key : kUnitKeys)
    if (key.field == field)
      note_deprecated("sweep:" + field_name(field),
                      where + ": " + field_name(field) + " is deprecated (a number of GB/s, bytes); write " + key.name +
                          ": " + value + "GB/s (the column keeps the name " + field_name(field) + " and GB/s)");
}

// "--seq: expected ..." -> "expected ...": the spec names the field itself.
std::string without_flag(const std::string& message) {
  if (message.rfind("--", 0) == 0) {
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) return message.substr(colon + 2);
  }
  return message;
}

double number(const std::string& value) {
  size_t used = 0;
  double parsed = 0;
  try {
    parsed = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size()) throw UserError(tessera::quoted(value) + " is not a number");
  // inf and nan parse, and would reach the cost model and the simulator as a time or a rate.
  if (!std::isfinite(parsed)) throw UserError(tessera::quoted(value) + " is not a finite number");
  return parsed;
}

int64_t positive_count(const std::string& value) {
  const int64_t count = parse_count(value);
  if (count <= 0) throw UserError("'" + value + "' is not a positive count");
  return count;
}

template <typename Parse>
void one_of(const std::string& value, Parse parse) {
  try {
    parse(value);
  } catch (const UserError& error) {
    throw UserError(without_flag(error.what()));
  }
}

void validate_topology(const std::string& value) {
  if (value.empty()) return;
  std::error_code ignored;
  if (std::filesystem::is_regular_file(value, ignored)) {
    topo::load_topology(value, 0);  // its own FILE:LINE errors
    return;
  }
  try {
    topo::load_topology(value, 0);
  } catch (const UserError& error) {
    // Presets sized by the GPU count cannot be built without one; only an unknown name is wrong.
    const std::string message = error.what();
    if (message.find("neither a preset") != std::string::npos)
      throw UserError("'" + value + "' is neither a topology preset (see tessera topo list) nor a readable file");
  }
}

}  // namespace

const std::string& field_name(Field field) { return fields()[static_cast<size_t>(field)].name; }
const std::string& field_default(Field field) { return fields()[static_cast<size_t>(field)].fallback; }

bool parse_field(const std::string& name, Field& field) {
  for (size_t index = 0; index < fields().size(); ++index)
    if (fields()[index].name == name) {
      field = static_cast<Field>(index);
      return true;
    }
  return false;
}

std::string field_list() {
  std::string list;
  for (const auto& info : fields()) list += (list.empty() ? "" : ", ") + info.name;
  for (const UnitKey& key : kUnitKeys) list += std::string(", ") + key.name;
  return list;
}

void validate_value(Field field, const std::string& value) {
  switch (field) {
    case Field::gpus: {
      const int64_t gpus = parse_count(value);
      if (gpus < 1 || gpus > (1 << 20)) throw UserError("expected 1 to 1048576 GPUs, got " + value);
      return;
    }
    case Field::seq:
    case Field::batch:
    case Field::heads:
    case Field::kv_heads:
    case Field::head_dim:
    case Field::window:
      positive_count(value);
      return;
    case Field::head_dim_v:
    case Field::chunk:
      if (!value.empty()) positive_count(value);
      return;
    case Field::documents: {
      if (value.empty()) return;
      std::stringstream stream(value);
      std::string part;
      while (std::getline(stream, part, ',')) positive_count(part);
      return;
    }
    case Field::dtype: one_of(value, parse_dtype); return;
    case Field::mask: one_of(value, parse_mask_kind); return;
    case Field::pass: one_of(value, parse_pass); return;
    case Field::layout:
      if (!value.empty()) one_of(value, parse_layout);
      return;
    case Field::algo: {
      if (value == "all") return;
      std::string names;
      for (const auto& info : list_generators()) {
        if (info.name == value && value != "file" && value != "assignment") return;
        if (info.name != "file" && info.name != "assignment") names += (names.empty() ? "" : ", ") + info.name;
      }
      throw UserError("unknown schedule '" + value + "' (expected all or one of: " + names + ")");
    }
    case Field::tile:
      if (!value.empty() && value != "all") one_of(value, parse_tile);
      return;
    case Field::variant: return;
    case Field::topology: validate_topology(value); return;
    case Field::placement:
      if (value == "linear" || value == "round-robin" || value == "auto" || value.rfind("list:", 0) == 0) return;
      throw UserError("unknown placement '" + value + "' (expected linear, round-robin, auto or list:...)");
    case Field::fidelity:
      if (value == "analytic" || value == "alpha-beta" || value == "flow") return;
      throw UserError("unknown fidelity '" + value + "' (expected analytic, alpha-beta or flow)");
    case Field::gpu: one_of(value, sim::gpu_profile); return;
    case Field::hbm_gbps:
    case Field::bandwidth_gbps:
      if (!is_bare_number(value))
        throw UserError("'" + value + "' is not a number (of GB/s); a bandwidth with its unit goes under " +
                        unit_key_of(field) + ": " + value);
      [[fallthrough]];
    case Field::peak_tflops:
      if (!(number(value) > 0)) throw UserError(value + " is not a positive number");
      return;
    case Field::efficiency: {
      const double efficiency = number(value);
      if (!(efficiency > 0 && efficiency <= 1)) throw UserError(value + " is not in (0, 1]");
      return;
    }
    case Field::latency_us:
    case Field::overhead_us:
      if (!(number(value) >= 0)) throw UserError(value + " is negative (expected >= 0)");
      return;
    case Field::channels: {
      const double channels = number(value);
      if (!(channels >= 0) || channels != static_cast<double>(static_cast<int64_t>(channels)) || channels > 1e6)
        throw UserError(value + " is not a whole number >= 0");
      return;
    }
  }
}

const std::vector<std::string>& figure_keys() {
  static const std::vector<std::string> keys = {"name",   "kind",  "x",    "y",    "series", "value",
                                                "title",  "xlabel", "ylabel", "logx", "logy",  "where",
                                                "aggregate", "format"};
  return keys;
}

Spec parse_spec(const std::string& text, const std::string& source) {
  const YamlReader reader(source);
  Spec spec;
  spec.source = source;
  spec.text = text;
  spec.name = std::filesystem::path(source).stem().string();
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    reader.fail_at_line(error.mark.line + 1, "not valid YAML: " + error.msg);
  }
  if (!root.IsMap()) reader.fail(root, "expected a mapping with keys such as fixed, axes, skip, outputs");
  reader.check_keys(root, {"name", "fixed", "axes", "skip", "not_applicable", "outputs", "figures"}, "at the top level");

  // A key names a field, or (bandwidth, hbm_bandwidth) a field it gives with a unit.
  struct Key {
    Field field{};
    bool with_unit = false;
  };
  auto key_of = [&](const YAML::Node& key, const std::string& path) {
    Key parsed;
    if (const UnitKey* unit = unit_key(key.Scalar())) {
      parsed = {unit->field, true};
    } else if (!parse_field(key.Scalar(), parsed.field)) {
      reader.fail(key, path + ": unknown field '" + key.Scalar() + "' (expected one of: " + field_list() + ")");
    }
    return parsed;
  };
  std::array<int, kFieldCount> set_at{};  // line where each field was given, 0: not given
  auto field_at = [&](const YAML::Node& node, const std::string& path) {
    const Key key = key_of(node, path);
    const int previous = set_at[static_cast<size_t>(key.field)];
    if (previous != 0)
      reader.fail(node, path + ": field '" + node.Scalar() + "' is already given on line " + std::to_string(previous) +
                            " (a field is fixed or on one axis, once)");
    set_at[static_cast<size_t>(key.field)] = YamlReader::line_of(node);
    return key;
  };
  // The value as the field's column holds it: a bandwidth with its unit becomes GB/s.
  auto checked_value = [&](const YAML::Node& node, Key key, const std::string& path) {
    if (!node.IsScalar()) reader.fail(node, path + ": expected a value, got " + (node.IsSequence() ? "a list" : "a mapping"));
    std::string value = node.Scalar();
    try {
      if (key.with_unit) value = gbps_text(value);
      validate_value(key.field, value);
    } catch (const UserError& error) {
      reader.fail(node, path + ": " + without_flag(error.what()));
    }
    if (!key.with_unit) note_gbps_field(source + ":" + std::to_string(YamlReader::line_of(node)), key.field, value);
    return value;
  };
  auto value_list = [&](const YAML::Node& node, Key key, const std::string& path) {
    std::vector<std::string> values;
    if (node.IsScalar()) {
      values.push_back(checked_value(node, key, path));
    } else if (node.IsSequence() && node.size() > 0) {
      for (size_t k = 0; k < node.size(); ++k)
        values.push_back(checked_value(node[k], key, path + "[" + std::to_string(k) + "]"));
    } else {
      reader.fail(node, path + ": expected a list of values, e.g. [16, 32, 64]");
    }
    return values;
  };

  if (reader.has(root, "name")) spec.name = reader.text(root, "", "name");
  for (size_t index = 0; index < fields().size(); ++index) spec.fixed[index] = fields()[index].fallback;

  if (reader.has(root, "fixed")) {
    const YAML::Node fixed = reader.field(root, "", "fixed");
    reader.require_map(fixed, "fixed");
    for (auto it = fixed.begin(); it != fixed.end(); ++it) {
      const std::string path = "fixed." + it->first.Scalar();
      const Key key = field_at(it->first, "fixed");
      if (it->second.IsNull()) reader.fail(it->first, path + ": has no value");
      spec.fixed[static_cast<size_t>(key.field)] = checked_value(it->second, key, path);
    }
  }

  if (reader.has(root, "axes")) {
    const YAML::Node axes = reader.field(root, "", "axes");
    if (!axes.IsSequence())
      reader.fail(axes, "axes: expected a list of entries such as '- gpus: [16, 32]' (one field: an axis; several: zipped)");
    for (size_t i = 0; i < axes.size(); ++i) {
      const YAML::Node entry = axes[i];
      const std::string path = "axes[" + std::to_string(i) + "]";
      if (!entry.IsMap() || entry.size() == 0)
        reader.fail(entry, path + ": expected a mapping of fields to lists, e.g. {gpus: [16, 32]}");
      AxisGroup group;
      group.line = YamlReader::line_of(entry);
      for (auto it = entry.begin(); it != entry.end(); ++it) {
        const Key key = field_at(it->first, path);
        const std::string field_path = path + "." + it->first.Scalar();
        if (it->second.IsNull()) reader.fail(it->first, field_path + ": has no value");
        group.fields.push_back(key.field);
        group.values.push_back(value_list(it->second, key, field_path));
        if (group.values.back().size() != group.values.front().size())
          reader.fail(it->first, field_path + ": has " + std::to_string(group.values.back().size()) +
                                     " values but " + field_name(group.fields.front()) + " has " +
                                     std::to_string(group.values.front().size()) +
                                     " (zipped fields need lists of equal length)");
      }
      spec.axes.push_back(std::move(group));
    }
  }
  if (spec.fixed[static_cast<size_t>(Field::algo)].empty() && set_at[static_cast<size_t>(Field::algo)] == 0)
    reader.fail_at_line(1, "no schedule: give 'algo' in fixed or on an axis (a generator name, or all)");

  if (reader.has(root, "skip")) {
    const YAML::Node skip = reader.field(root, "", "skip");
    if (!skip.IsSequence()) reader.fail(skip, "skip: expected a list of rules such as {algo: ulysses, gpus: [128]}");
    for (size_t i = 0; i < skip.size(); ++i) {
      const YAML::Node entry = skip[i];
      const std::string path = "skip[" + std::to_string(i) + "]";
      if (!entry.IsMap() || entry.size() == 0) reader.fail(entry, path + ": expected a mapping of fields to values");
      SkipRule rule;
      for (auto it = entry.begin(); it != entry.end(); ++it) {
        const Key key = key_of(it->first, path);
        rule.match.emplace_back(key.field, value_list(it->second, key, path + "." + it->first.Scalar()));
      }
      spec.skip.push_back(std::move(rule));
    }
  }

  if (reader.has(root, "not_applicable")) {
    const std::string value = reader.text(root, "", "not_applicable");
    if (value != "record" && value != "drop")
      reader.fail(root["not_applicable"], "not_applicable: unknown value '" + value + "' (expected record or drop)");
    spec.drop_not_applicable = value == "drop";
  }

  if (reader.has(root, "outputs")) {
    const YAML::Node outputs = reader.field(root, "", "outputs");
    if (!outputs.IsSequence() || outputs.size() == 0) reader.fail(outputs, "outputs: expected a list such as [csv, jsonl]");
    spec.write_csv = spec.write_jsonl = false;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string value = reader.text(outputs[i], "outputs[" + std::to_string(i) + "]");
      if (value == "csv") {
        spec.write_csv = true;
      } else if (value == "jsonl") {
        spec.write_jsonl = true;
      } else {
        reader.fail(outputs[i], "outputs[" + std::to_string(i) + "]: unknown output '" + value + "' (expected csv or jsonl)");
      }
    }
  }

  if (reader.has(root, "figures")) {
    const YAML::Node figures = reader.field(root, "", "figures");
    if (!figures.IsSequence()) reader.fail(figures, "figures: expected a list of {name, kind, x, y, series, ...}");
    std::set<std::string> names;
    for (size_t i = 0; i < figures.size(); ++i) {
      const YAML::Node entry = figures[i];
      const std::string path = "figures[" + std::to_string(i) + "]";
      reader.require_map(entry, path);
      reader.check_keys(entry, figure_keys(), "in " + path);
      FigureRequest request;
      request.line = YamlReader::line_of(entry);
      for (auto it = entry.begin(); it != entry.end(); ++it)
        request.options[it->first.Scalar()] = reader.text(it->second, path + "." + it->first.Scalar());
      for (const char* required : {"name", "x", "y"})
        if (!request.options.count(required)) reader.fail(entry, path + ": missing field '" + required + "'");
      const std::string& name = request.options["name"];
      if (name.find_first_of("/\\ ") != std::string::npos || name.empty() || name[0] == '.')
        reader.fail(entry["name"], path + ".name: '" + name + "' is not a plain file name (letters, digits, - and _)");
      if (!names.insert(name).second) reader.fail(entry["name"], path + ".name: '" + name + "' is used twice");
      spec.figures.push_back(std::move(request));
    }
  }
  return spec;
}

Spec load_spec(const std::string& path) {
  return parse_spec(file_io::read_text(path, "sweep spec", file_io::kSpecBytesPerByte), path);
}

}  // namespace tessera::sweep
