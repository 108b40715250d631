#pragma once
// A kernel's dynamic shared memory (the bytes given at launch). Under the tests' CPU emulation
// of the kernels (tests/cuda_emulation), the emulator hands out the block's buffer instead.
#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

__device__ inline unsigned char* dynamic_shared_memory() {
#ifdef TESSERA_CUDA_EMULATION
  return tessera_emulation::dynamic_shared_memory();
#else
  extern __shared__ __align__(128) unsigned char bytes[];
  return bytes;
#endif
}

}  // namespace tessera::backend::cuda
