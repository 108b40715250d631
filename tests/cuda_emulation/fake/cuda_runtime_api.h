#pragma once
// CPU emulation of the little of the CUDA runtime that the kernels' sources use, so that the
// kernels themselves (backend/cuda/*.cu) can be compiled as C++ and run by the tests on any
// machine. See emulator.hpp for how a launch runs: one std::thread per CUDA thread, real
// barriers for __syncthreads/__syncwarp, one block after another.
#include <cmath>
#include <cstddef>
#include <cstdint>

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

inline thread_local dim3 threadIdx{0, 0, 0};
inline thread_local dim3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};

using cudaStream_t = struct CUstream_st*;
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNotReady = 600 };

inline float __expf(float x) { return std::exp(x); }

namespace tessera_emulation {
unsigned char* dynamic_shared_memory();
void sync_block();
void sync_warp();
float exchange_in_warp(float value, int from_lane);
}  // namespace tessera_emulation

inline void __syncthreads() { tessera_emulation::sync_block(); }
inline void __syncwarp(unsigned = 0xffffffffu) { tessera_emulation::sync_warp(); }
inline float __shfl_xor_sync(unsigned, float value, int lane_mask) {
  return tessera_emulation::exchange_in_warp(value, static_cast<int>(threadIdx.x % 32) ^ lane_mask);
}

float atomicAdd(float* address, float value);
unsigned long long atomicMin(unsigned long long* address, unsigned long long value);
unsigned long long atomicMax(unsigned long long* address, unsigned long long value);

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) {
  return cudaSuccess;
}
