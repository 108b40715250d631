#pragma once
// A progress line for long commands (calibrate, validate), like sweep's: "  3/12 steps  label
// ETA 40 s", redrawn in place on a terminal; nothing when stderr is not one (scripts and logs
// get the results alone).
#include <chrono>
#include <string>

namespace tessera::cli {

class ProgressLine {
 public:
  ProgressLine();  // on when stderr is a terminal
  // `done` of `total` steps finished, the last being `label`: the line with the ETA at the
  // average pace so far.
  void update(int done, int total, const std::string& label);
  void finish();  // ends the line (when one was drawn)

 private:
  bool enabled_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string format_duration(double seconds);  // "40 s", "3 min 5 s", "1.5 h"

}  // namespace tessera::cli
