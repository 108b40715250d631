#include "tessera/sim/shared_devices.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tessera::sim {

double DeviceSharing::speedup(int64_t concurrent) const {
  if (concurrency_speedup.empty() || concurrent < 1) return 1;
  const auto at = static_cast<size_t>(std::min<int64_t>(concurrent, static_cast<int64_t>(concurrency_speedup.size())));
  return concurrency_speedup[at - 1];
}

double DeviceSharing::devices(int64_t busy) const {
  if (devices_speedup.empty() || busy < 1) return static_cast<double>(std::max<int64_t>(busy, 1));
  const auto at = static_cast<size_t>(std::min<int64_t>(busy, static_cast<int64_t>(devices_speedup.size())));
  // Beyond the curve each further device adds what the last measured one did on average.
  const double last = devices_speedup[at - 1];
  return busy <= static_cast<int64_t>(devices_speedup.size()) ? last : last * static_cast<double>(busy) / static_cast<double>(at);
}

SharedDevices::SharedDevices(int32_t devices, DeviceSharing sharing)
    : sharing_(std::move(sharing)), devices_(static_cast<size_t>(std::max(0, devices))) {}

double SharedDevices::rate(const Device& device) const {
  const auto k = static_cast<int64_t>(device.jobs.size());
  if (k == 0) return 0;
  const double per_device = sharing_.devices_speedup.empty() ? 1 : sharing_.devices(busy_) / static_cast<double>(busy_);
  return per_device * sharing_.speedup(k) / static_cast<double>(k);
}

// Every job on the device has progressed at the shared rate since the last change.
void SharedDevices::advance(Device& device, double now_s) {
  const double done_s = rate(device) * (now_s - device.updated_s);
  for (Job& job : device.jobs) job.remaining_s = std::max(0.0, job.remaining_s - done_s);
  device.updated_s = now_s;
}

void SharedDevices::reschedule(int32_t index) {
  Device& device = devices_[static_cast<size_t>(index)];
  ++device.version;
  if (device.jobs.empty()) return;
  double least_s = std::numeric_limits<double>::infinity();
  for (const Job& job : device.jobs) least_s = std::min(least_s, job.remaining_s);
  completions_.push(Completion{device.updated_s + least_s / rate(device), index, device.version});
}

void SharedDevices::set_busy(int64_t busy, double now_s) {
  for (Device& device : devices_) advance(device, now_s);
  busy_ = busy;
  // Every device: a busy one's finish moves, an idle one's stale prediction must go.
  for (size_t index = 0; index < devices_.size(); ++index) reschedule(static_cast<int32_t>(index));
}

void SharedDevices::change_busy(int64_t delta, double now_s) {
  if (sharing_.devices_speedup.empty()) busy_ += delta;  // no device slows another: no rate moves
  else set_busy(busy_ + delta, now_s);
}

void SharedDevices::start(int32_t index, double work_s, uint32_t tag, double now_s) {
  Device& device = devices_.at(static_cast<size_t>(index));
  if (device.jobs.empty()) change_busy(+1, now_s);
  advance(device, now_s);
  device.jobs.push_back(Job{work_s, tag, sequence_++});
  reschedule(index);
}

std::pair<double, int32_t> SharedDevices::next_completion() {
  while (!completions_.empty()) {
    const Completion& top = completions_.top();
    if (top.version == devices_[static_cast<size_t>(top.device)].version) return {top.time_s, top.device};
    completions_.pop();  // the device changed since: a newer prediction is queued
  }
  return {std::numeric_limits<double>::infinity(), -1};
}

uint32_t SharedDevices::finish(int32_t index, double now_s) {
  Device& device = devices_.at(static_cast<size_t>(index));
  if (device.jobs.empty()) throw std::logic_error("shared device: no op to finish");
  advance(device, now_s);
  // The op with the least work left finishes (its remainder is rounding); ties by start order.
  auto done = std::min_element(device.jobs.begin(), device.jobs.end(), [](const Job& a, const Job& b) {
    return a.remaining_s != b.remaining_s ? a.remaining_s < b.remaining_s : a.sequence < b.sequence;
  });
  const uint32_t tag = done->tag;
  device.jobs.erase(done);
  if (device.jobs.empty()) change_busy(-1, now_s);
  reschedule(index);
  return tag;
}

}  // namespace tessera::sim
