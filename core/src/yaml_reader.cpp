#include "tessera/core/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "tessera/core/error.hpp"

namespace tessera {

namespace {

// How a value that has the wrong type is quoted in a message.
std::string shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  return node.IsSequence() ? "a list" : node.IsMap() ? "a mapping" : "nothing";
}

int key_line(const YAML::Node& map, const std::string& key) {
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.Scalar() == key) return YamlReader::line_of(it->first);
  return YamlReader::line_of(map);
}

}  // namespace

void YamlReader::fail(const YAML::Node& at, const std::string& what) const { fail_at_line(line_of(at), what); }

void YamlReader::fail_at_line(int line, const std::string& what) const {
  throw UserError(source_ + ":" + std::to_string(line) + ": " + what);
}

int YamlReader::line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line < 0 ? 1 : mark.line + 1;
}

std::string YamlReader::path_of(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void YamlReader::require_map(const YAML::Node& node, const std::string& path) const {
  if (!node.IsMap()) fail(node, path + ": expected a mapping of keys to values");
}

void YamlReader::check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                            const std::string& where) const {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& name : allowed) list += (list.empty() ? "" : ", ") + name;
      fail(it->first, "unknown key '" + key + "' " + where + " (expected one of: " + list + ")");
    }
    if (!seen.insert(key).second) fail(it->first, "key '" + key + "' appears twice " + where);
  }
}

YAML::Node YamlReader::field(const YAML::Node& map, const std::string& path, const std::string& key) const {
  YAML::Node node = map[key];
  if (!node.IsDefined()) fail(map, (path.empty() ? "" : path + ": ") + "missing field '" + key + "'");
  // An empty value's mark is where the next token starts; point at its key instead.
  if (node.IsNull()) fail_at_line(key_line(map, key), path_of(path, key) + ": has no value");
  return node;
}

double YamlReader::number(const YAML::Node& node, const std::string& name) const {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value))
    fail(node, name + ": expected a number, got " + shown(node));
  return value;
}

double YamlReader::positive(const YAML::Node& map, const std::string& path, const std::string& key) const {
  const YAML::Node node = field(map, path, key);
  const double value = number(node, path_of(path, key));
  if (value <= 0) fail(node, path_of(path, key) + ": " + node.Scalar() + " is not a positive number");
  return value;
}

double YamlReader::non_negative(const YAML::Node& map, const std::string& path, const std::string& key) const {
  const YAML::Node node = field(map, path, key);
  const double value = number(node, path_of(path, key));
  if (value < 0) fail(node, path_of(path, key) + ": " + node.Scalar() + " is negative (expected >= 0)");
  return value;
}

int32_t YamlReader::integer(const YAML::Node& node, int32_t min, const std::string& name) const {
  constexpr int64_t kMax = int64_t{1} << 24;
  int64_t value = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value))
    fail(node, name + ": expected a whole number, got " + shown(node));
  if (value < min || value > kMax)
    fail(node, name + ": " + std::to_string(value) + " is out of range (expected " + std::to_string(min) + " to " +
                   std::to_string(kMax) + ")");
  return static_cast<int32_t>(value);
}

int32_t YamlReader::integer(const YAML::Node& map, const std::string& path, const std::string& key,
                            int32_t min) const {
  return integer(field(map, path, key), min, path_of(path, key));
}

bool YamlReader::flag(const YAML::Node& map, const std::string& path, const std::string& key, bool fallback) const {
  if (!has(map, key)) return fallback;
  const YAML::Node node = field(map, path, key);
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value))
    fail(node, path_of(path, key) + ": expected true or false, got " + shown(node));
  return value;
}

std::string YamlReader::text(const YAML::Node& node, const std::string& name) const {
  if (!node.IsScalar()) fail(node, name + ": expected a name, got " + shown(node));
  return node.Scalar();
}

std::string YamlReader::text(const YAML::Node& map, const std::string& path, const std::string& key) const {
  return text(field(map, path, key), path_of(path, key));
}

}  // namespace tessera
