#include "tessera/core/yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "tessera/core/error.hpp"

namespace tessera {

namespace {

// How a value that has the wrong type is shown in a message (a long scalar is cut).
std::string shown(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  if (node.IsScalar()) return tessera::quoted(node.Scalar());
  return node.IsSequence() ? "a list" : node.IsMap() ? "a mapping" : "nothing";
}

// "-123", "+7", "0042": digits with an optional sign, which a failed conversion to an integer
// can only mean is out of range (rather than not a number at all).
bool looks_like_integer(const std::string& text) {
  size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > start && text.find_first_not_of("0123456789", start) == std::string::npos;
}

// A number that is not finite, written as YAML (".inf", "-.Inf", ".nan") or as C reads it
// ("inf", "nan", "1e999", which overflows): the message then says so, not "not a number".
bool names_a_non_finite(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string unsigned_part = !lower.empty() && (lower[0] == '-' || lower[0] == '+') ? lower.substr(1) : lower;
  if (unsigned_part == ".inf" || unsigned_part == ".nan") return true;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && !std::isfinite(value);
}

std::string shown_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
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
  // A missing node (map["absent"]) has no mark; Mark() would throw on one.
  if (!node.IsDefined()) return 1;
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
      fail(it->first, "unknown key " + tessera::quoted(key) + " " + where + " (expected one of: " + list + ")");
    }
    if (!seen.insert(key).second) fail(it->first, "key " + tessera::quoted(key) + " appears twice " + where);
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
  if (!node.IsDefined()) fail(node, name + ": missing (expected a number)");
  double value = 0;
  if (node.IsScalar() && names_a_non_finite(node.Scalar()))
    fail(node, name + ": expected a finite number, got " + shown(node));
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value))
    fail(node, name + ": expected a number, got " + shown(node));
  return value;
}

double YamlReader::number(const YAML::Node& node, const std::string& name, double min, double max) const {
  const double value = number(node, name);
  if (value < min || value > max)
    fail(node, name + ": " + shown_number(value) + " is out of range (expected " + shown_number(min) + " to " +
                   shown_number(max) + ")");
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

int32_t YamlReader::integer(const YAML::Node& node, int32_t min, const std::string& name, int32_t max) const {
  if (!node.IsDefined()) fail(node, name + ": missing (expected a whole number)");
  const std::string range = "(expected " + std::to_string(min) + " to " + std::to_string(max) + ")";
  int64_t value = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value)) {
    // Digits that do not fit 64 bits are a number out of range, not a word.
    if (node.IsScalar() && looks_like_integer(node.Scalar()))
      fail(node, name + ": " + tessera::quoted(node.Scalar()) + " is out of range " + range);
    fail(node, name + ": expected a whole number, got " + shown(node));
  }
  if (value < min || value > max) fail(node, name + ": " + std::to_string(value) + " is out of range " + range);
  return static_cast<int32_t>(value);
}

int32_t YamlReader::integer(const YAML::Node& map, const std::string& path, const std::string& key, int32_t min,
                            int32_t max) const {
  return integer(field(map, path, key), min, path_of(path, key), max);
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
  if (!node.IsDefined()) fail(node, name + ": missing (expected a name)");
  if (!node.IsScalar()) fail(node, name + ": expected a name, got " + shown(node));
  // Text goes on into names, file paths and JSON output, all of which need UTF-8.
  if (!is_valid_utf8(node.Scalar())) fail(node, name + ": not valid UTF-8 text: " + tessera::quoted(node.Scalar()));
  return node.Scalar();
}

std::string YamlReader::text(const YAML::Node& map, const std::string& path, const std::string& key) const {
  return text(field(map, path, key), path_of(path, key));
}

}  // namespace tessera
