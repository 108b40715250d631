#include "tessera/core/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "tessera/core/error.hpp"

namespace tessera {

namespace {

constexpr const char* kExamples = "e.g. 400Gb/s (bits per second) or 50GB/s (bytes per second)";

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The length of the decimal number that starts `text` ("3.35e2TB/s" -> 6), 0 when there is
// none. An `e` counts as an exponent only when digits follow, so "5eB/s" is "5" then "eB/s".
size_t number_length(std::string_view text) {
  size_t at = 0, digits = 0;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
  for (; at < text.size() && is_digit(text[at]); ++at) ++digits;
  if (at < text.size() && text[at] == '.')
    for (++at; at < text.size() && is_digit(text[at]); ++at) ++digits;
  if (digits == 0) return 0;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    size_t exponent = at + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    if (exponent < text.size() && is_digit(text[exponent])) {
      for (at = exponent; at < text.size() && is_digit(text[at]); ++at) {
      }
    }
  }
  return at;
}

// The SI prefix's power of ten; 0 when `c` is not one. K is taken for k, as people write KB/s.
double prefix_scale(char c) {
  switch (c) {
    case 'k':
    case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    default: return 0;
  }
}

struct UnitSpelling {
  std::string_view text;
  bool bits;
};
constexpr std::array<UnitSpelling, 6> kUnits = {{
    {"B/s", false}, {"Byte/s", false}, {"Bps", false}, {"b/s", true}, {"bit/s", true}, {"bps", true}}};

}  // namespace

bool is_bare_number(const std::string& text) {
  const std::string_view value = trimmed(text);
  return !value.empty() && number_length(value) == value.size();
}

double parse_bandwidth_bytes_per_s(const std::string& text, const std::string& where) {
  const std::string_view value = trimmed(text);
  const std::string quoted = "'" + text + "'";
  if (value.empty()) throw UserError(where + ": expected a bandwidth with its unit, " + kExamples + ", got nothing");
  const size_t length = number_length(value);
  if (length == 0) throw UserError(where + ": expected a bandwidth with its unit, " + kExamples + ", got " + quoted);
  const std::string_view number = value.substr(0, length);
  if (length == value.size()) {
    const std::string bare(number);
    throw UserError(where + ": " + quoted + " has no unit: write " + bare + "GB/s (bytes per second) or " + bare +
                    "Gb/s (bits per second)");
  }

  std::string_view unit = trimmed(value.substr(length));
  double scale = 1;
  if (prefix_scale(unit.front()) != 0) {
    scale = prefix_scale(unit.front());
    unit.remove_prefix(1);
    if (!unit.empty() && unit.front() == 'i')
      throw UserError(where + ": " + quoted +
                      " has a binary prefix; bandwidths are quoted in SI units (1 GB/s = 1e9 B/s), " + kExamples);
  }
  const UnitSpelling* spelling = nullptr;
  for (const UnitSpelling& candidate : kUnits)
    if (unit == candidate.text) spelling = &candidate;
  if (spelling == nullptr)
    throw UserError(where + ": unknown unit in " + quoted +
                    " (expected B/s or b/s after an SI prefix k, M, G, T or P; " + kExamples + ")");

  // from_chars takes no leading '+'.
  const std::string_view digits = number.front() == '+' ? number.substr(1) : number;
  double mantissa = 0;
  const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), mantissa);
  // Out of range (overflow) is the only failure left: the text is a well-formed number.
  if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size())
    throw UserError(where + ": " + quoted + " is out of range");
  const double bytes_per_s = spelling->bits ? mantissa * scale / 8 : mantissa * scale;
  if (!std::isfinite(bytes_per_s)) throw UserError(where + ": " + quoted + " is out of range");
  if (!(bytes_per_s > 0)) throw UserError(where + ": " + quoted + " is not a positive bandwidth");
  return bytes_per_s;
}

std::string format_bandwidth(double bytes_per_s) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15gGB/s", bytes_per_s / kBytesPerSecondPerGBps);
  return text;
}

}  // namespace tessera
