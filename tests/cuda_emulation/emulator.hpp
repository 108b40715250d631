#pragma once
// Runs CUDA kernels compiled as C++ (with the headers in fake/) on the CPU: every CUDA thread of
// a block is a std::thread, __syncthreads and __syncwarp are real barriers, warp shuffles go
// through a per-warp exchange, and blocks run one after another. Slow (every lane of a WMMA op
// does the whole tile), so the tests use small problems; what it checks is the kernels' index
// arithmetic, masks, softmax and reductions, and that their barriers are where they must be.
#include <cstddef>
#include <functional>

#include "cuda_runtime_api.h"

namespace tessera_emulation {

void launch(dim3 grid, dim3 block, size_t dynamic_shared_bytes, const std::function<void()>& kernel);

}  // namespace tessera_emulation
