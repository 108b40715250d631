// The emulated CUDA runtime (see fake/cuda_runtime_api.h): one device whose memory is host
// memory and whose streams run their work at the moment it is issued.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cuda_runtime_api.h"

namespace {
struct Event {
  double seconds = 0;
};
int current_device = 0;
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
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
  }
  return "cudaErrorUnknown";
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  current_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  *properties = {};
  std::strcpy(properties->name, "CPU emulation of a CUDA device");
  properties->totalGlobalMem = size_t{8} << 30;
  properties->major = 9;
  properties->multiProcessorCount = 1;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = *total_bytes = size_t{8} << 30;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaMalloc(void** data, size_t bytes) {
  // 256-byte aligned like cudaMalloc; filled with a pattern so that reading memory nobody wrote
  // shows up as wrong numbers.
  const size_t rounded = (bytes + 255) / 256 * 256;
  *data = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
  if (*data == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*data, 0x7f, rounded);
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** data, size_t bytes, cudaStream_t) { return cudaMalloc(data, bytes); }
cudaError_t cudaFree(void* data) {
  std::free(data);
  return cudaSuccess;
}
cudaError_t cudaFreeAsync(void* data, cudaStream_t) { return cudaFree(data); }
cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(to, from, bytes, kind);
}
cudaError_t cudaMemsetAsync(void* data, int value, size_t bytes, cudaStream_t) {
  std::memset(data, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  *stream = reinterpret_cast<cudaStream_t>(new char(0));
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete reinterpret_cast<char*>(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  *event = reinterpret_cast<cudaEvent_t>(new Event);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<Event*>(event);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  reinterpret_cast<Event*>(event)->seconds = now_s();
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = static_cast<float>((reinterpret_cast<Event*>(end)->seconds - reinterpret_cast<Event*>(start)->seconds) * 1e3);
  return cudaSuccess;
}
