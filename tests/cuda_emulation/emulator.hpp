#pragma once
// Runs CUDA kernels compiled as C++ (with the headers in fake/) on the CPU: every CUDA thread of
// a block is a std::thread, __syncthreads and __syncwarp are real barriers, warp shuffles go
// through a per-warp exchange, and blocks run one after another. Slow (every lane of a WMMA op
// does the whole tile), so the tests use small problems; what it checks is the kernels' index
// arithmetic, masks, softmax and reductions, and that their barriers are where they must be.
// tessera_emulation::launch is declared in fake/cuda_runtime_api.h, where the kernels' launcher
// (backend/cuda/kernel_launch.cuh) finds it.
#include "cuda_runtime_api.h"
