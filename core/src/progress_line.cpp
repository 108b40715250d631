#include "tessera/core/progress_line.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace tessera {

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

ProgressLine::ProgressLine(std::ostream* out, size_t total, std::string unit)
    : out_(out), total_(total), unit_(std::move(unit)) {}

void ProgressLine::advance(size_t count, const std::string& note) { set(done_ + count, note); }

void ProgressLine::set(size_t done, const std::string& note) {
  done_ = done;
  if (!out_) return;
  const double now = std::chrono::duration<double>(Clock::now() - start_).count();
  if (done_ < total_ && now - last_drawn_s_ < 0.2) return;
  last_drawn_s_ = now;
  // A rate from the first fraction of a second would be noise: shown from half a second on.
  constexpr double kSteadyAfterS = 0.5;
  const double rate = now >= kSteadyAfterS ? static_cast<double>(done_) / now : 0;
  std::ostringstream line;
  line << "  " << done_ << "/" << total_ << " " << unit_;
  if (rate > 0) line << "  " << std::fixed << std::setprecision(rate < 10 ? 2 : 0) << rate << " " << unit_ << "/s";
  if (rate > 0 && done_ < total_) line << "  ETA " << format_duration(static_cast<double>(total_ - done_) / rate);
  if (!note.empty()) line << "  " << note;
  std::string text = line.str();
  // Blanks over what a longer previous line left behind.
  const size_t width = text.size();
  if (width < drawn_width_) text.append(drawn_width_ - width, ' ');
  drawn_width_ = width;
  *out_ << "\r" << text << std::flush;
}

void ProgressLine::finish(bool keep) {
  if (!out_ || total_ == 0 || last_drawn_s_ < 0) return;
  if (keep) {
    *out_ << "\n" << std::flush;
  } else {
    *out_ << "\r" << std::string(drawn_width_, ' ') << "\r" << std::flush;
  }
}

}  // namespace tessera
