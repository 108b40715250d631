#pragma once
// Timing helpers shared by the benchmarks: wall-clock seconds and medians (these machines are
// noisy, so every figure printed is a median of repeated runs).
#include <algorithm>
#include <chrono>
#include <vector>

namespace tessera::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace tessera::bench
