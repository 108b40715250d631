#pragma once
// The CUDA executor: runs a checked schedule on GPUs. Schedule streams become CUDA streams,
// dependencies between streams become events, transfers go through a DeviceTransport (device
// copies between virtual ranks on one GPU, or NCCL between GPUs), blocks run the kernels of
// attention_kernels.hpp, and every op is bracketed by timing events (the measured trace).
// can_run (cuda_readiness.hpp) checks the kernels' limits, the GPUs and the memory first.
#include <memory>

#include "tessera/backend/executor.hpp"

namespace tessera::backend::cuda {

// Throws BackendUnavailable when no GPU is visible: an executor exists only where a GPU does.
std::unique_ptr<ScheduleExecutor> make_cuda_executor(const ExecutorOptions& options);

}  // namespace tessera::backend::cuda
