#pragma once
// One progress line on a terminal for long work (a sweep's points, a plan's candidates): done
// of total, the rate and the time left, redrawn in place at most five times a second. Front
// ends create it only when standard error is a terminal; with no stream it only counts.
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace tessera {

// "42 s", "3 min 20 s", "1.5 h": the time left, as a person reads it.
std::string format_duration(double seconds);

class ProgressLine {
 public:
  // `unit` names what is counted ("points", "schedules"); `out` nullptr: silent.
  ProgressLine(std::ostream* out, size_t total, std::string unit);
  void advance(size_t count, const std::string& note = "");
  // Where `done` is known as a total (a callback that reports done of total).
  void set(size_t done, const std::string& note = "");
  // Where the total is learnt after the work has started (the clock runs from construction).
  void set_total(size_t total) { total_ = total; }
  // Ends the line: a newline after the last state (keep), or the line wiped (erase).
  void finish(bool keep = true);

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream* out_;
  size_t total_;
  std::string unit_;
  size_t done_ = 0;
  size_t drawn_width_ = 0;
  Clock::time_point start_ = Clock::now();
  double last_drawn_s_ = -1;
};

}  // namespace tessera
