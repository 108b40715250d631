#pragma once
// Ranks sharing a device (P ranks on G < P devices: virtual ranks on one GPU, CPU threads on
// fewer cores). The compute of the ranks on one device shares it by processor sharing: with k
// compute ops running there, the device delivers speedup(k) times what one op alone gets, split
// evenly, so each op progresses at speedup(k) / k of its alone-rate. speedup is the measured
// concurrency curve (`tessera calibrate`: the throughput of 1..K concurrent blocks over one
// block's); beyond K it stays at speedup(K). An op's work is the seconds it would take alone.
// Transfers between ranks on one device are device copies; the engine runs them as flows over
// the device's copy resource (engine.hpp), so concurrent copies share its bandwidth.
#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/sim/min_queue.hpp"

namespace tessera::sim {

struct DeviceSharing {
  // speedup[k - 1]: throughput of k concurrent compute ops over one op's; empty = {1} (a device
  // that does one thing at a time, e.g. one CPU core). Each value in (0, 1e6].
  std::vector<double> concurrency_speedup;
  // devices_speedup[n - 1]: compute throughput of n busy devices together over one busy device's
  // (CPU cores sharing a physical core, its memory or its power: below n); each busy device's
  // ops then progress at devices_speedup(n) / n of their rate. Empty: devices are independent.
  std::vector<double> devices_speedup;
  // Bytes per second of a copy between two ranks on one device; 0: copies take no time.
  double copy_bytes_per_s = 0;

  double speedup(int64_t concurrent) const;  // speedup(k), k >= 1
  double devices(int64_t busy) const;        // devices_speedup(n), n >= 1; beyond the curve its last value
};

class SharedDevices {
 public:
  SharedDevices(int32_t devices, DeviceSharing sharing);
  // Starts an op of `work_s` (its time alone) on `device` at now_s.
  void start(int32_t device, double work_s, uint32_t tag, double now_s);
  // The next op to finish (time, device), or (infinity, -1) when nothing runs.
  std::pair<double, int32_t> next_completion();
  // Retires the op of `device` that finishes at now_s (the time next_completion() gave) and
  // returns its tag.
  uint32_t finish(int32_t device, double now_s);

 private:
  struct Job {
    double remaining_s;  // work left, in seconds alone
    uint32_t tag;
    uint64_t sequence;   // ties finish in the order started
  };
  struct Device {
    std::vector<Job> jobs;
    double updated_s = 0;
    uint32_t version = 0;
  };
  struct Completion {
    double time_s;
    int32_t device;
    uint32_t version;
    bool operator>(const Completion& other) const {
      return time_s != other.time_s ? time_s > other.time_s : device > other.device;
    }
  };
  double rate(const Device& device) const;  // per job
  void advance(Device& device, double now_s);
  void reschedule(int32_t device);
  // A device turned busy or idle: with a devices curve every busy device's rate changes, so all
  // progress to now_s at the old rates and are rescheduled at the new ones.
  void set_busy(int64_t busy, double now_s);
  void change_busy(int64_t delta, double now_s);  // a device going busy (+1) or idle (-1)

  DeviceSharing sharing_;
  std::vector<Device> devices_;
  MinQueue<Completion> completions_;
  uint64_t sequence_ = 0;
  int64_t busy_ = 0;  // devices with an op running
};

}  // namespace tessera::sim
