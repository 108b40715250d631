#pragma once
// Work items admitted by the memory they need: each holds an estimate of its bytes while it runs,
// and one waits while it and those running would pass the limit. One item alone always starts
// (whether it fits alone is the caller's check, made before), so nothing waits forever.
//
// Why not fewer threads instead: a plan's candidates range from megabytes to gigabytes, and
// sizing the thread count by the largest estimate runs every small candidate one at a time too
// (at 1024 GPUs, one candidate that turns out not to apply, estimated at 16 GB against a limit
// of 18 GB, kept the whole plan on one core).
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace tessera {

class MemoryBudget {
 public:
  explicit MemoryBudget(double limit_bytes) : limit_bytes_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Waits until `bytes` fit beside what is held, or nothing is held; then holds them.
  void acquire(double bytes);
  // Gives back what acquire(bytes) held, waking those waiting.
  void release(double bytes);

  double held_bytes() const;
  size_t running() const;

 private:
  const double limit_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  double held_bytes_ = 0;
  size_t running_ = 0;
};

// Holds `bytes` of a budget for its lifetime.
class MemoryReservation {
 public:
  MemoryReservation(MemoryBudget& budget, double bytes) : budget_(budget), bytes_(bytes) { budget_.acquire(bytes_); }
  ~MemoryReservation() { budget_.release(bytes_); }
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;

 private:
  MemoryBudget& budget_;
  const double bytes_;
};

}  // namespace tessera
