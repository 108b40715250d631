#pragma once
// CPU emulation of the part of the CUDA runtime that backend/cuda uses, so that its kernels and
// its executor can be compiled as C++ and run by the tests on any machine: one device, memory
// on the host, streams as queues run at random when the host waits (emulated_runtime.cpp), and
// kernels run thread by thread (emulator.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// Static shared arrays are shared by every thread of the block; blocks run one after another,
// so a static variable is a faithful stand-in.
#define __shared__ static

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

inline thread_local dim3 threadIdx{0, 0, 0};
inline thread_local dim3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};

using cudaStream_t = struct CUstream_st*;
using cudaEvent_t = struct CUevent_st*;
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
};
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
constexpr unsigned cudaEventDefault = 0, cudaEventDisableTiming = 2, cudaStreamNonBlocking = 1;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major, minor, multiProcessorCount;
};

const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMalloc(void** data, size_t bytes);
cudaError_t cudaMallocAsync(void** data, size_t bytes, cudaStream_t stream);
cudaError_t cudaFree(void* data);
cudaError_t cudaFreeAsync(void* data, cudaStream_t stream);
// Stream-ordered allocation's pool: the emulation has none to trim, so the attribute is accepted
// and has no effect.
typedef struct CUmemPoolHandle_st* cudaMemPool_t;
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value);
cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void* data, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

inline float __expf(float x) { return std::exp(x); }

namespace tessera_emulation {
// Runs `kernel` as grid x block CUDA threads (see emulator.cpp).
void launch(dim3 grid, dim3 block, size_t dynamic_shared_bytes, const std::function<void()>& kernel);
// The emulated machine has this many GPUs (for the nccl transport); their memory is all host memory.
constexpr int kDevices = 8;
// What cudaMemGetInfo reports: 8 GB free of 8 GB on every GPU unless a test says otherwise.
constexpr size_t kDeviceBytes = size_t{8} << 30;
void set_free_bytes(int device, size_t bytes);
// Queues `launch` on `stream` (which must belong to the current GPU): it runs when the host
// waits for that stream's work.
cudaError_t enqueue_launch(cudaStream_t stream, std::function<void()> launch);
// Queues work on a stream, runnable once `ready()` holds (the emulated NCCL uses it).
void enqueue_on(cudaStream_t stream, std::function<void()> run, std::function<bool()> ready);
int device_of(cudaStream_t stream);
// Held while one host thread drives the emulated machine (emulated MPI processes are threads).
std::recursive_mutex& machine_lock();
unsigned char* dynamic_shared_memory();
void sync_block();
void sync_warp();
float exchange_in_warp(float value, int from_lane);
uint64_t exchange_in_warp_64(uint64_t value, int from_lane);
// The warp-wide tensor-core operations of backend/cuda/warp_mma.cuh, with the fragment layouts
// of the PTX ISA (emulated_warp_matrix.cpp). Every lane of the warp must call them.
void mma_m16n8k16(bool bf16, float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
void ldmatrix(int matrices, bool trans, uint32_t* registers, const void* row_address);
// cp.async: a copy is only recorded; it lands in shared memory when a wait_group covers it.
void cp_async_16(void* to, const void* from, bool valid);
void cp_async_commit();
void cp_async_wait(int pending);
// Test-only: a nonzero value makes the emulated fragments deliberately wrong in one place (see
// emulated_warp_matrix.cpp), so that tests can show they catch such a mistake.
extern int fragment_mutation;
}  // namespace tessera_emulation

inline void __syncthreads() { tessera_emulation::sync_block(); }
inline void __syncwarp(unsigned = 0xffffffffu) { tessera_emulation::sync_warp(); }
inline float __shfl_xor_sync(unsigned, float value, int lane_mask) {
  return tessera_emulation::exchange_in_warp(value, static_cast<int>(threadIdx.x % 32) ^ lane_mask);
}

inline long long __shfl_xor_sync(unsigned, long long value, int lane_mask) {
  return static_cast<long long>(
      tessera_emulation::exchange_in_warp_64(static_cast<uint64_t>(value), static_cast<int>(threadIdx.x % 32) ^ lane_mask));
}
inline unsigned __shfl_xor_sync(unsigned, unsigned value, int lane_mask) {
  return static_cast<unsigned>(tessera_emulation::exchange_in_warp_64(value, static_cast<int>(threadIdx.x % 32) ^ lane_mask));
}

float atomicAdd(float* address, float value);
unsigned long long atomicMin(unsigned long long* address, unsigned long long value);
unsigned long long atomicMax(unsigned long long* address, unsigned long long value);

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) {
  return cudaSuccess;
}
