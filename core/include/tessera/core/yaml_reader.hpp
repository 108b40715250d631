#pragma once
// Reading a YAML file (topology descriptions, sweep specs) with errors that say
// "FILE:LINE: what was wrong (what was expected)". Fields are named by their path in the file
// ("links[3].bandwidth_gbps"). Every failure throws UserError.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

class YamlReader {
 public:
  // `source` is the file name (or preset name) that starts every message.
  explicit YamlReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const;
  [[noreturn]] void fail_at_line(int line, const std::string& what) const;
  // The 1-based line of a node (YAML marks count from 0; an empty document has no mark: 1).
  static int line_of(const YAML::Node& node);
  // "links[3]" + "from" -> "links[3].from"; at the top level the key alone.
  static std::string path_of(const std::string& path, const std::string& key);

  void require_map(const YAML::Node& node, const std::string& path) const;
  // Unknown (often misspelt) keys are errors: a silently ignored key is a wrong result.
  // `where` completes "unknown key 'x' ...", e.g. "in links[3]".
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) const;
  bool has(const YAML::Node& map, const std::string& key) const { return map[key].IsDefined(); }
  // The value under `key`; fails when it is missing or empty.
  YAML::Node field(const YAML::Node& map, const std::string& path, const std::string& key) const;

  // A finite number (".inf", ".nan" and 1e999 are refused as not finite).
  double number(const YAML::Node& node, const std::string& name) const;
  // A finite number from `min` to `max`.
  double number(const YAML::Node& node, const std::string& name, double min, double max) const;
  double positive(const YAML::Node& map, const std::string& path, const std::string& key) const;
  double non_negative(const YAML::Node& map, const std::string& path, const std::string& key) const;
  // A whole number from `min` to `max` (2^24 unless said); digits past 64 bits are out of range.
  static constexpr int32_t kMaxInteger = int32_t{1} << 24;
  int32_t integer(const YAML::Node& node, int32_t min, const std::string& name, int32_t max = kMaxInteger) const;
  int32_t integer(const YAML::Node& map, const std::string& path, const std::string& key, int32_t min,
                  int32_t max = kMaxInteger) const;
  // true or false; `fallback` when the key is absent.
  bool flag(const YAML::Node& map, const std::string& path, const std::string& key, bool fallback) const;
  // A scalar, as written; text that is not valid UTF-8 is refused (names go into JSON output).
  std::string text(const YAML::Node& node, const std::string& name) const;
  std::string text(const YAML::Node& map, const std::string& path, const std::string& key) const;

 private:
  std::string source_;
};

}  // namespace tessera
