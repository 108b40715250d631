#pragma once
// JSON in and out, with the contract of every other input: a bad file is a UserError naming the
// file, the line (for syntax) and the field (for content), never an exception from the JSON
// library. Output never throws either: text that is not UTF-8 (a name read from a YAML file, a
// path) is written with U+FFFD in place of the bad bytes.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera {

// Parses `text`; `source` (a file name) starts every message:
// "run.json:3:14: not valid JSON (syntax error ...)", "run.json: number out of range (1e999)".
nlohmann::json parse_json_text(std::string_view text, const std::string& source);
// Reads and parses the file at `path`. `what` names it in "cannot open the WHAT". A file too large
// to parse within the memory limit (core/resource_limits.hpp) is refused before it is read.
nlohmann::json read_json_file(const std::string& path, const std::string& what);
// `json` as text (compact when indent < 0), never throwing on bad UTF-8.
std::string json_text(const nlohmann::json& json, int indent = -1);

// Typed access to a parsed document. Fields are named by their path ("ops[3].peer"); every
// failure throws UserError "SOURCE: PATH: expected ...".
class JsonReader {
 public:
  explicit JsonReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const std::string& path, const std::string& what) const;
  // "ops" + 3 -> "ops[3]"; "" + "gpu" -> "gpu"; "link" + "latency_s" -> "link.latency_s".
  static std::string path_of(const std::string& path, size_t index);
  static std::string path_of(const std::string& path, const std::string& key);

  const nlohmann::json& object(const nlohmann::json& value, const std::string& path) const;
  const nlohmann::json& array(const nlohmann::json& value, const std::string& path) const;
  // The member `key` of `object`, which must be present.
  const nlohmann::json& field(const nlohmann::json& object, const std::string& path, const std::string& key) const;
  static bool has(const nlohmann::json& object, const std::string& key) {
    return object.is_object() && object.contains(key);
  }

  // A finite number.
  double number(const nlohmann::json& value, const std::string& path) const;
  double positive(const nlohmann::json& value, const std::string& path) const;
  double non_negative(const nlohmann::json& value, const std::string& path) const;
  // A whole number in [min, max] (a JSON integer, or a float with no fraction).
  int64_t integer(const nlohmann::json& value, const std::string& path, int64_t min, int64_t max) const;
  bool boolean(const nlohmann::json& value, const std::string& path) const;
  std::string text(const nlohmann::json& value, const std::string& path) const;

 private:
  std::string source_;
};

}  // namespace tessera
