#include "tessera/core/json_io.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/resource_limits.hpp"

namespace tessera {

namespace {

// The library's message without its "[json.exception.parse_error.101] " prefix.
std::string library_message(const std::exception& error) {
  std::string text = error.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const size_t end = text.find("] ");
    if (end != std::string::npos) text = text.substr(end + 2);
  }
  return text;
}

// Line and column (1-based) of the byte at `offset` (the parser counts bytes from 1).
std::string line_and_column(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t at = 0; at + 1 < offset && at < text.size(); ++at) {
    if (text[at] == '\n') ++line, column = 1;
    else ++column;
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Parsed JSON takes several times its text's size; 16 is a safe multiple for nlohmann's nodes.
constexpr uint64_t kParsedBytesPerTextByte = 16;

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& error) {
    throw UserError(source + ":" + line_and_column(text, error.byte) + ": not valid JSON (" + library_message(error) + ")");
  } catch (const nlohmann::json::exception& error) {
    // out_of_range 406: a number that overflows a double, such as 1e999. The library gives the
    // number but not its place: the first occurrence of that text is where the parser stopped.
    const std::string message = library_message(error);
    const size_t open = message.find('\''), close = message.rfind('\'');
    std::string place;
    if (open != std::string::npos && close > open + 1) {
      const size_t at = text.find(std::string_view(message).substr(open + 1, close - open - 1));
      if (at != std::string_view::npos) place = ":" + line_and_column(text, at + 1);
    }
    throw UserError(source + place + ": not usable JSON (" + message + ")");
  }
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw UserError(path + ": is a directory, expected the " + what);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UserError(path + ": cannot open the " + what);
  // Read in pieces up to what the memory limit lets us parse: a device such as /dev/zero, or a
  // pipe, has no size to check beforehand and may never end.
  const uint64_t most_bytes = memory_limit_bytes() / kParsedBytesPerTextByte;
  std::string text;
  char piece[1 << 16];
  while (file.read(piece, sizeof piece) || file.gcount() > 0) {
    text.append(piece, static_cast<size_t>(file.gcount()));
    if (text.size() > most_bytes)
      require_memory(static_cast<double>(text.size()) * kParsedBytesPerTextByte, "reading " + path);
  }
  if (file.bad()) throw UserError(path + ": reading the " + what + " failed");
  return parse_json_text(text, path);
}

std::string json_text(const nlohmann::json& json, int indent) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonReader::fail(const std::string& path, const std::string& what) const {
  throw UserError(source_ + ": " + (path.empty() ? std::string() : path + ": ") + what);
}

std::string JsonReader::path_of(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string JsonReader::path_of(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

const nlohmann::json& JsonReader::object(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_object()) fail(path, std::string("expected a JSON object, got ") + value.type_name());
  return value;
}

const nlohmann::json& JsonReader::array(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_array()) fail(path, std::string("expected a JSON array, got ") + value.type_name());
  return value;
}

const nlohmann::json& JsonReader::field(const nlohmann::json& object, const std::string& path,
                                        const std::string& key) const {
  this->object(object, path);
  const auto found = object.find(key);
  if (found == object.end()) fail(path_of(path, key), "missing");
  return *found;
}

double JsonReader::number(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_number()) fail(path, std::string("expected a number, got ") + value.type_name());
  const double number = value.get<double>();
  if (!std::isfinite(number)) fail(path, "expected a finite number");
  return number;
}

double JsonReader::positive(const nlohmann::json& value, const std::string& path) const {
  const double result = number(value, path);
  if (!(result > 0)) fail(path, "expected a positive number");
  return result;
}

double JsonReader::non_negative(const nlohmann::json& value, const std::string& path) const {
  const double result = number(value, path);
  if (!(result >= 0)) fail(path, "expected a number >= 0");
  return result;
}

int64_t JsonReader::integer(const nlohmann::json& value, const std::string& path, int64_t min, int64_t max) const {
  const std::string range = "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (value.is_number_integer()) {
    // Unsigned values above INT64_MAX are out of every range we accept.
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) fail(path, range);
    const int64_t result = value.get<int64_t>();
    if (result < min || result > max) fail(path, range + ", got " + std::to_string(result));
    return result;
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    // 2^63 is the first double past INT64_MAX.
    if (!std::isfinite(number) || std::floor(number) != number || number < -9.2233720368547758e18 ||
        number >= 9.2233720368547758e18)
      fail(path, range);
    const auto result = static_cast<int64_t>(number);
    if (result < min || result > max) fail(path, range + ", got " + std::to_string(result));
    return result;
  }
  fail(path, range + ", got " + value.type_name());
}

bool JsonReader::boolean(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_boolean()) fail(path, std::string("expected true or false, got ") + value.type_name());
  return value.get<bool>();
}

std::string JsonReader::text(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_string()) fail(path, std::string("expected a string, got ") + value.type_name());
  return value.get<std::string>();
}

}  // namespace tessera
