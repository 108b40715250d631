#include "tessera/core/memory_budget.hpp"

namespace tessera {

void MemoryBudget::acquire(double bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  freed_.wait(lock, [&] { return running_ == 0 || held_bytes_ + bytes <= limit_bytes_; });
  held_bytes_ += bytes;
  ++running_;
}

void MemoryBudget::release(double bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held_bytes_ -= bytes;
    --running_;
    // Floating-point sums of estimates need not return to exactly 0.
    if (running_ == 0) held_bytes_ = 0;
  }
  freed_.notify_all();
}

double MemoryBudget::held_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_bytes_;
}

size_t MemoryBudget::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

}  // namespace tessera
