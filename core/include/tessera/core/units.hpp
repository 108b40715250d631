#pragma once
// Bandwidths as people type them, with the unit written out: "400Gb/s" (bits) or "50GB/s"
// (bytes). Network specs are quoted in bits, memory and NVLink in bytes; a bare number would be
// read one way by one reader and the other way by the next, so a bandwidth always carries its
// unit. The rule (README: Units):
//   NUMBER [space] PREFIX UNIT
//   PREFIX: none, k (or K), M, G, T, P: SI powers of ten (1 GB/s = 1e9 B/s). Binary prefixes
//           (GiB/s) are refused: the data sheets quote SI.
//   UNIT:   B/s, Byte/s, Bps (bytes per second) or b/s, bit/s, bps (bits per second: / 8).
// Inside, every bandwidth is bytes per second.
#include <string>

namespace tessera {

// 1 GB/s in bytes per second. The deprecated `_gbps` spellings (a bare number of GB/s) are
// multiplied by this, as NUMBER GB/s is: the two spellings give the same double.
inline constexpr double kBytesPerSecondPerGBps = 1e9;

// Bytes per second of `text` ("400Gb/s" -> 5e10, "3.35TB/s" -> 3.35e12): the number times the
// prefix's power of ten, in double precision, then / 8 for bits (exact: a power of two). So
// "400Gb/s" and "50GB/s" are both exactly 5e10. Throws UserError starting with `where` (a flag
// or a field, "--bandwidth") when the unit is missing or unknown or the value is not a
// positive finite number.
double parse_bandwidth_bytes_per_s(const std::string& text, const std::string& where);

// True when `text` is a plain number (no unit): what a deprecated `_gbps` field holds.
bool is_bare_number(const std::string& text);

// A bandwidth as a person reads it, in GB/s with up to 15 significant digits: 5e10 -> "50GB/s".
// For help texts and messages, not for round trips.
std::string format_bandwidth(double bytes_per_s);

}  // namespace tessera
