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
//
// Counts and sizes (README: Units), one rule for every flag and field that takes one:
//   NUMBER                 a whole number: 4096
//   NUMBER K|M|G|T         a count times a power of 1024, the field's habit for sequence lengths
//                          and buffers: 128K tokens = 131072, 1G = 2^30 (k, m, g, t too)
//   NUMBER B|kB|MB|GB|TB   sizes in bytes only: SI with a B (1 MB = 1e6 bytes; KB taken for kB)
//   NUMBER KiB|MiB|GiB|TiB sizes in bytes only: binary (1 MiB = 2^20 bytes, the same as 1M)
// so `--size 1G` and `--size 1GiB` are 2^30 bytes and `--size 1GB` is 1e9 bytes. Printed sizes are
// SI (format_bytes: 1.07 GB for 2^30 bytes).
#include <cstdint>
#include <string>

namespace tessera {

// 1 GB/s in bytes per second. The deprecated `_gbps` spellings (a bare number of GB/s) are
// multiplied by this, as NUMBER GB/s is: the two spellings give the same double.
inline constexpr double kBytesPerSecondPerGBps = 1e9;
// The bandwidths any reader accepts: 1 bit/s to 1 EB/s (1e18 B/s). Below, a transfer of a large
// problem's bytes would take longer than a double can count; above is no machine.
inline constexpr double kMinBandwidthBytesPerS = 0.125;
inline constexpr double kMaxBandwidthBytesPerS = 1e18;

// Bytes per second of `text` ("400Gb/s" -> 5e10, "3.35TB/s" -> 3.35e12): the number times the
// prefix's power of ten, in double precision, then / 8 for bits (exact: a power of two). So
// "400Gb/s" and "50GB/s" are both exactly 5e10. Throws UserError starting with `where` (a flag
// or a field, "--bandwidth") when the unit is missing or unknown or the value is not a
// number in [kMinBandwidthBytesPerS, kMaxBandwidthBytesPerS].
double parse_bandwidth_bytes_per_s(const std::string& text, const std::string& where);

// A count: "1M" -> 1048576, "128K" -> 131072, "4096"; UserError (naming no flag: the caller
// adds it) for anything else, a byte unit included, or a value past 2^63 - 1.
int64_t parse_count(const std::string& text);
// A size in bytes: a count as above, or a number with a byte unit ("1GB" -> 1e9, "1GiB" -> 2^30,
// "512B" -> 512). UserError as for parse_count.
int64_t parse_byte_size(const std::string& text);
// "1G" for 2^30: the largest power of 1024 that divides `count` as its suffix (inverse of parse_count).
std::string format_count(int64_t count);

// True when `text` is a plain number (no unit): what a deprecated `_gbps` field holds.
bool is_bare_number(const std::string& text);

// A bandwidth as a person reads it, in GB/s with up to 15 significant digits: 5e10 -> "50GB/s".
// For help texts and messages, not for round trips.
std::string format_bandwidth(double bytes_per_s);

}  // namespace tessera
