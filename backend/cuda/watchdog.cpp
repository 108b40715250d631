#include "watchdog.hpp"

#include <chrono>

namespace tessera::backend::cuda {

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Watchdog::Watchdog(DeviceTransport& transport, double limit_s) : transport_(transport), limit_s_(limit_s) {
  last_progress_ns_ = now_ns();
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  thread_.join();
}

void Watchdog::progress(uint32_t op) {
  op_ = op;
  last_progress_ns_ = now_ns();
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Wakes ten times per limit (at most every 100 ms) to compare the clock with the limit.
    const double tick_s = std::min(0.1, limit_s_ / 10);
    stop_signal_.wait_for(lock, std::chrono::duration<double>(tick_s), [this] { return stopping_; });
    if (stopping_) break;
    if (static_cast<double>(now_ns() - last_progress_ns_.load()) * 1e-9 > limit_s_) {
      fired_ = true;
      transport_.abort();
      break;
    }
  }
}

}  // namespace tessera::backend::cuda
