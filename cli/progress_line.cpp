#include "progress_line.hpp"

#include <unistd.h>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace tessera::cli {

std::string format_duration(double seconds) {
  std::ostringstream text;
  if (seconds < 90) {
    text << static_cast<int>(std::ceil(seconds)) << " s";
  } else if (seconds < 5400) {
    text << static_cast<int>(seconds / 60) << " min " << static_cast<int>(std::fmod(seconds, 60)) << " s";
  } else {
    text << std::fixed << std::setprecision(1) << seconds / 3600 << " h";
  }
  return text.str();
}

ProgressLine::ProgressLine() : enabled_(isatty(STDERR_FILENO) != 0) {}

void ProgressLine::update(int done, int total, const std::string& label) {
  if (!enabled_ || total <= 0) return;
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::ostringstream line;
  line << "\r  " << done << "/" << total << " steps  " << label.substr(0, 60);
  if (done > 0 && done < total) line << "  ETA " << format_duration(elapsed_s / done * (total - done));
  line << "        ";
  std::cerr << line.str() << std::flush;
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) std::cerr << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace tessera::cli
