#include "tessera/core/resource_limits.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tessera/core/error.hpp"

namespace tessera {

namespace {

// "8GiB", "8GB", "500M", "123456": bytes. Binary suffixes (Ki, Mi, Gi, Ti) are powers of 1024,
// SI ones (K, M, G, T) powers of 1000; a trailing B is optional.
uint64_t parse_limit(std::string_view text) {
  char* end = nullptr;
  const std::string copy(text);
  const double number = std::strtod(copy.c_str(), &end);
  std::string_view unit(end);
  if (!unit.empty() && unit.back() == 'B') unit.remove_suffix(1);
  double scale = 1;
  const bool binary = unit.size() == 2 && unit[1] == 'i';
  if (!unit.empty()) {
    const char prefix = unit[0];
    const int power = prefix == 'K' || prefix == 'k' ? 1 : prefix == 'M' ? 2 : prefix == 'G' ? 3 : prefix == 'T' ? 4 : -1;
    if (power < 0 || unit.size() > (binary ? 2u : 1u))
      throw UserError("TESSERA_MEMORY_LIMIT: expected bytes such as 8GB, 8GiB or 500M, got " + quoted(text));
    scale = std::pow(binary ? 1024.0 : 1000.0, power);
  }
  const double bytes = number * scale;
  if (end == copy.c_str() || !std::isfinite(bytes) || !(bytes > 0) || bytes > 1.8e19)
    throw UserError("TESSERA_MEMORY_LIMIT: expected a positive number of bytes such as 8GB, got " + quoted(text));
  return static_cast<uint64_t>(bytes);
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

}  // namespace

uint64_t memory_limit_bytes() {
  if (const char* set = std::getenv("TESSERA_MEMORY_LIMIT"); set != nullptr && *set != '\0') return parse_limit(set);
  uint64_t limit = physical_memory_bytes() / 4 * 3;
  rlimit address_space{};
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY)
    limit = std::min<uint64_t>(limit, address_space.rlim_cur / 4 * 3);
  return limit;
}

void require_memory(double estimate_bytes, const std::string& what) {
  const uint64_t limit = memory_limit_bytes();
  if (estimate_bytes <= static_cast<double>(limit)) return;
  const char* set = std::getenv("TESSERA_MEMORY_LIMIT");
  const bool from_environment = set != nullptr && *set != '\0';
  throw UserError(what + " needs about " + format_bytes(estimate_bytes) + " of memory, more than the limit of " +
                  format_bytes(static_cast<double>(limit)) +
                  (from_environment ? " (set by TESSERA_MEMORY_LIMIT)"
                                    : " (three quarters of this machine's memory; set TESSERA_MEMORY_LIMIT to change it)"));
}

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int unit = 0;
  if (!std::isfinite(bytes)) return "more than 1e18 bytes";
  while (bytes >= 1000 && unit < 6) bytes /= 1000, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.3g %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace tessera
