#include "tessera/core/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
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

// A count or size: the whole number that starts `text`, then its suffix's multiplier. `bytes`
// admits the byte units (B, kB ... TB, KiB ... TiB) beside the bare binary suffixes.
int64_t parse_whole_with_suffix(const std::string& text, bool bytes) {
  const char* examples = bytes ? "a size such as 4096, 4M, 1GiB or 1GB" : "a number such as 4096, 128K or 1M";
  if (text.empty()) throw UserError(std::string("expected ") + examples + ", got an empty value");
  size_t end = 0;
  uint64_t value = 0;
  bool too_large = false;
  for (; end < text.size() && is_digit(text[end]); ++end) {
    if (too_large) continue;  // keep reading the digits, to find the suffix
    value = value * 10 + static_cast<uint64_t>(text[end] - '0');  // < 2^63 * 10 + 9 < 2^64
    too_large = value > static_cast<uint64_t>(INT64_MAX);
  }
  if (end == 0) throw UserError(std::string("expected ") + examples + ", got " + tessera::quoted(text));
  const std::string_view suffix = std::string_view(text).substr(end);
  struct Suffix {
    std::string_view text;
    int64_t multiplier;
    bool byte_unit;
  };
  constexpr int64_t kKi = int64_t{1} << 10;
  static constexpr std::array<Suffix, 26> kSuffixes = {{
      {"", 1, false},
      {"K", kKi, false}, {"k", kKi, false}, {"M", kKi * kKi, false}, {"m", kKi * kKi, false},
      {"G", kKi * kKi * kKi, false}, {"g", kKi * kKi * kKi, false},
      {"T", kKi * kKi * kKi * kKi, false}, {"t", kKi * kKi * kKi * kKi, false},
      {"B", 1, true}, {"kB", 1000, true}, {"KB", 1000, true}, {"MB", 1000 * 1000, true},
      {"GB", 1000 * 1000 * 1000, true}, {"TB", int64_t{1000} * 1000 * 1000 * 1000, true},
      {"KiB", kKi, true}, {"MiB", kKi * kKi, true}, {"GiB", kKi * kKi * kKi, true},
      {"TiB", kKi * kKi * kKi * kKi, true},
      // Spellings that look like units but are not ones: refused below with the rule.
      {"b", 0, true}, {"kb", 0, true}, {"Kb", 0, true}, {"Mb", 0, true}, {"Gb", 0, true}, {"kiB", 0, true},
      {"Ki", 0, false},
  }};
  const Suffix* found = nullptr;
  for (const Suffix& candidate : kSuffixes)
    if (candidate.text == suffix) found = &candidate;
  if (found == nullptr || found->multiplier == 0 || (found->byte_unit && !bytes)) {
    const std::string expected = bytes ? "K, M, G, T (powers of 1024), kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB"
                                       : "K, M, G or T, powers of 1024";
    throw UserError("number " + tessera::quoted(text) + " has an unknown suffix " + tessera::quoted(suffix) + " (expected " + expected + ")");
  }
  if (too_large || value > static_cast<uint64_t>(INT64_MAX / found->multiplier))
    throw UserError("number " + tessera::quoted(text) + " is too large (at most 2^63 - 1)");
  return static_cast<int64_t>(value) * found->multiplier;
}

}  // namespace

int64_t parse_count(const std::string& text) { return parse_whole_with_suffix(text, false); }

int64_t parse_byte_size(const std::string& text) { return parse_whole_with_suffix(text, true); }

std::string format_count(int64_t count) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int index = 0;
  while (index < 4 && count != 0 && count % 1024 == 0) {
    count /= 1024;
    ++index;
  }
  return std::to_string(count) + suffixes[index];
}

bool is_bare_number(const std::string& text) {
  const std::string_view value = trimmed(text);
  return !value.empty() && number_length(value) == value.size();
}

double parse_bandwidth_bytes_per_s(const std::string& text, const std::string& where) {
  const std::string_view value = trimmed(text);
  const std::string quoted = tessera::quoted(text);
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
  if (bytes_per_s < kMinBandwidthBytesPerS || bytes_per_s > kMaxBandwidthBytesPerS)
    throw UserError(where + ": " + quoted + " is out of range (1b/s to 1000PB/s)");
  return bytes_per_s;
}

std::string format_bandwidth(double bytes_per_s) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15gGB/s", bytes_per_s / kBytesPerSecondPerGBps);
  return text;
}

}  // namespace tessera
