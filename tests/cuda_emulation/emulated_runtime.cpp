// The emulated CUDA runtime (see fake/cuda_runtime_api.h): one device whose memory is host
// memory. Work issued to a stream (kernels, copies, memsets, event records and waits, stream-
// ordered frees) is queued, and runs when the host waits for it (an event query, a device
// synchronisation, a blocking copy or free), streams interleaved at random (fixed seed) as far
// as their event waits allow. So an executor that forgets a dependency between streams reads
// data before it is written, or after it is freed, and gets wrong numbers or NaN.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cuda_runtime_api.h"

namespace {

struct Task {
  std::function<bool()> ready;  // empty: always ready
  std::function<void()> run;
};
struct Stream {
  int device = 0;
  std::deque<Task> tasks;
};
// Each cudaEventRecord is a version of the event; a wait or query refers to the version that was
// the latest when it was called, however the streams later run (an event re-recorded on another
// stream does not disturb waits on its earlier record).
struct Event {
  int device = 0;                     // the GPU current at creation: records need its streams
  uint64_t recorded = 0;              // versions issued by the host
  std::vector<bool> reached{true};    // version v reached by its stream (version 0: never recorded)
  std::vector<double> seconds{0.0};   // when each version was reached
  bool has_reached(uint64_t version) const { return reached[version]; }
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// All emulated GPUs together (tessera_emulation::kDevices of them): streams of every GPU are
// drained together, as the host waits on any of them.
struct Device {
  Device() {
    for (int index = 0; index < tessera_emulation::kDevices; ++index) {
      legacy_default[index].device = index;
      streams.push_back(&legacy_default[index]);
    }
  }
  Stream legacy_default[tessera_emulation::kDevices];
  std::vector<Stream*> streams;
  std::map<void*, size_t> allocations;
  std::vector<void*> freed;  // poisoned, kept until the device is idle
  std::mt19937 random{2024};
};
// The current GPU is per host thread, as in CUDA (each emulated MPI process is a thread).
thread_local int current_device = 0;
Device& device() {
  static Device instance;
  return instance;
}
using tessera_emulation::machine_lock;

Stream& stream_of(cudaStream_t stream) {
  return stream == nullptr ? device().legacy_default[current_device] : *reinterpret_cast<Stream*>(stream);
}
void enqueue(cudaStream_t stream, std::function<void()> run, std::function<bool()> ready = {}) {
  stream_of(stream).tasks.push_back({std::move(ready), std::move(run)});
}

// Runs queued work, the head of a random runnable stream at a time, until `done()` holds or
// nothing can run now; returns done().
bool drain_until(const std::function<bool()>& done) {
  Device& d = device();
  std::vector<Stream*> runnable;
  for (;;) {
    if (done()) return true;
    runnable.clear();
    for (Stream* stream : d.streams)
      if (!stream->tasks.empty() && (!stream->tasks.front().ready || stream->tasks.front().ready())) runnable.push_back(stream);
    if (runnable.empty()) return false;
    Stream* stream = runnable[std::uniform_int_distribution<size_t>(0, runnable.size() - 1)(d.random)];
    Task task = std::move(stream->tasks.front());
    stream->tasks.pop_front();
    task.run();
  }
}

// Waits until `done()`: work blocked on another emulated process (an NCCL peer that has not
// issued its half yet) may be unblocked by that process's thread, so wait for it a while; work
// that stays blocked for a minute is a deadlock.
void wait_until(std::unique_lock<std::recursive_mutex>& lock, const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!drain_until(done)) {
    if (std::chrono::steady_clock::now() > give_up)
      throw std::runtime_error("emulated CUDA device: queued work waits forever (a cycle of event waits, or an NCCL "
                               "send or receive whose peer never comes)");
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
}

void synchronize_device(std::unique_lock<std::recursive_mutex>& lock) {
  Device& d = device();
  wait_until(lock, [&d] {
    return std::all_of(d.streams.begin(), d.streams.end(), [](const Stream* stream) { return stream->tasks.empty(); });
  });
  for (void* data : d.freed) std::free(data);
  d.freed.clear();
}

// 0xff bytes are NaN in fp32, bf16 and fp16: a kernel that reads freed memory produces NaN.
void poison(void* data) { std::memset(data, 0xff, device().allocations.at(data)); }

}  // namespace

namespace tessera_emulation {
std::recursive_mutex& machine_lock() {
  static std::recursive_mutex lock;
  return lock;
}
cudaError_t enqueue_launch(cudaStream_t stream, std::function<void()> launch) {
  std::unique_lock lock(machine_lock());
  // As on a GPU, a kernel goes to a stream of the current device only.
  if (stream_of(stream).device != current_device) return cudaErrorInvalidResourceHandle;
  enqueue(stream, std::move(launch));
  return cudaSuccess;
}
void enqueue_on(cudaStream_t stream, std::function<void()> run, std::function<bool()> ready) {
  std::unique_lock lock(machine_lock());
  enqueue(stream, std::move(run), std::move(ready));
}
int device_of(cudaStream_t stream) {
  std::unique_lock lock(machine_lock());
  return stream_of(stream).device;
}
namespace {
std::array<size_t, kDevices> free_bytes_of = [] {
  std::array<size_t, kDevices> bytes{};
  bytes.fill(kDeviceBytes);
  return bytes;
}();
}  // namespace
void set_free_bytes(int device, size_t bytes) {
  std::unique_lock lock(machine_lock());
  free_bytes_of[device] = bytes;
}
}  // namespace tessera_emulation

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  }
  return "unknown error";
}
const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  }
  return "cudaErrorUnknown";
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* count) {
  std::unique_lock lock(machine_lock());
  *count = tessera_emulation::kDevices;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* current) {
  std::unique_lock lock(machine_lock());
  *current = current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int index) {
  std::unique_lock lock(machine_lock());
  if (index < 0 || index >= tessera_emulation::kDevices) return cudaErrorInvalidDevice;
  current_device = index;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int index) {
  std::unique_lock lock(machine_lock());
  if (index < 0 || index >= tessera_emulation::kDevices) return cudaErrorInvalidDevice;
  *properties = {};
  std::strcpy(properties->name, "CPU emulation of a CUDA device");
  properties->totalGlobalMem = size_t{8} << 30;
  properties->major = 9;
  properties->multiProcessorCount = 1;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  std::unique_lock lock(machine_lock());
  *free_bytes = tessera_emulation::free_bytes_of[static_cast<size_t>(current_device)];
  *total_bytes = tessera_emulation::kDeviceBytes;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  std::unique_lock lock(machine_lock());
  synchronize_device(lock);
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** data, size_t bytes) {
  std::unique_lock lock(machine_lock());
  // 256-byte aligned like cudaMalloc, and filled with large finite values so that reading
  // memory nobody wrote shows up as wrong numbers.
  const size_t rounded = bytes == 0 ? 256 : (bytes + 255) / 256 * 256;
  *data = std::aligned_alloc(256, rounded);
  if (*data == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*data, 0x7f, rounded);
  device().allocations[*data] = rounded;
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** data, size_t bytes, cudaStream_t) { return cudaMalloc(data, bytes); }
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (device < 0 || device >= tessera_emulation::kDevices) return cudaErrorInvalidDevice;
  *pool = nullptr;
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
cudaError_t cudaFree(void* data) {
  std::unique_lock lock(machine_lock());
  synchronize_device(lock);  // cudaFree waits for the device, as on a GPU
  if (data == nullptr) return cudaSuccess;
  if (device().allocations.erase(data) == 0) return cudaErrorInvalidValue;
  std::free(data);
  return cudaSuccess;
}
cudaError_t cudaFreeAsync(void* data, cudaStream_t stream) {
  std::unique_lock lock(machine_lock());
  if (device().allocations.count(data) == 0) return cudaErrorInvalidValue;
  enqueue(stream, [data] {
    poison(data);
    device().allocations.erase(data);
    device().freed.push_back(data);
  });
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::unique_lock lock(machine_lock());
  // A blocking copy on the legacy default stream: it waits for that stream's work, not for the
  // non-blocking streams the executor creates.
  Stream* legacy = &device().legacy_default[current_device];
  wait_until(lock, [legacy] { return legacy->tasks.empty(); });
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind, cudaStream_t stream) {
  std::unique_lock lock(machine_lock());
  enqueue(stream, [=] { std::memmove(to, from, bytes); });
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* data, int value, size_t bytes, cudaStream_t stream) {
  std::unique_lock lock(machine_lock());
  enqueue(stream, [=] { std::memset(data, value, bytes); });
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  std::unique_lock lock(machine_lock());
  auto* created = new Stream;
  created->device = current_device;
  device().streams.push_back(created);
  *stream = reinterpret_cast<cudaStream_t>(created);
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  std::unique_lock lock(machine_lock());
  // Work already queued still completes (as on a GPU); then the stream goes.
  auto* target = reinterpret_cast<Stream*>(stream);
  wait_until(lock, [target] { return target->tasks.empty(); });
  auto& streams = device().streams;
  streams.erase(std::remove(streams.begin(), streams.end(), target), streams.end());
  delete target;
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned) {
  std::unique_lock lock(machine_lock());
  // Waits for the event's most recent record at the time of this call (none: no wait).
  auto* waited = reinterpret_cast<Event*>(event);
  const uint64_t version = waited->recorded;
  enqueue(stream, [] {}, [waited, version] { return waited->has_reached(version); });
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  std::unique_lock lock(machine_lock());
  auto* created = new Event;
  created->device = current_device;
  *event = reinterpret_cast<cudaEvent_t>(created);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::unique_lock lock(machine_lock());
  delete reinterpret_cast<Event*>(event);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  std::unique_lock lock(machine_lock());
  auto* recorded = reinterpret_cast<Event*>(event);
  // An event belongs to its GPU: recording it on another GPU's stream fails, as on a GPU.
  if (recorded->device != stream_of(stream).device) return cudaErrorInvalidResourceHandle;
  const uint64_t version = ++recorded->recorded;
  recorded->reached.push_back(false);
  recorded->seconds.push_back(0.0);
  enqueue(stream, [recorded, version] {
    recorded->reached[version] = true;
    recorded->seconds[version] = now_s();
  });
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t event) {
  std::unique_lock lock(machine_lock());
  auto* queried = reinterpret_cast<Event*>(event);
  const uint64_t version = queried->recorded;
  drain_until([queried, version] { return queried->has_reached(version); });
  return queried->has_reached(version) ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  std::unique_lock lock(machine_lock());
  auto* first = reinterpret_cast<Event*>(start);
  auto* last = reinterpret_cast<Event*>(end);
  if (!first->has_reached(first->recorded) || !last->has_reached(last->recorded)) return cudaErrorNotReady;
  *ms = static_cast<float>((last->seconds[last->recorded] - first->seconds[first->recorded]) * 1e3);
  return cudaSuccess;
}
