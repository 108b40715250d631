#pragma once
// A second thread that watches a run. When nothing has been issued or completed for the limit,
// it aborts the transport: ncclCommAbort is what unblocks a thread stuck inside NCCL (under MPI
// a peer that never arrives leaves ncclGroupEnd or a kernel waiting forever), so the run then
// fails with an error instead of hanging, and the watchdog says which op was waited on.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "transport.hpp"

namespace tessera::backend::cuda {

class Watchdog {
 public:
  Watchdog(DeviceTransport& transport, double limit_s);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Progress: the run now waits on (or issues) op `op`; the clock starts again.
  void progress(uint32_t op);
  bool fired() const { return fired_.load(); }
  uint32_t op_waited_on() const { return op_.load(); }
  double limit_s() const { return limit_s_; }

 private:
  void watch();

  DeviceTransport& transport_;
  const double limit_s_;
  std::atomic<uint32_t> op_{0};
  std::atomic<int64_t> last_progress_ns_{0};
  std::atomic<bool> fired_{false};
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::backend::cuda
