#pragma once
// Whether the CUDA executor can run a schedule here, decided before anything is allocated or any
// communicator is set up: the kernels' limits, the GPUs the transport needs, and the memory each
// GPU this process uses must hold (device_buffers.hpp's plan).
#include "tessera/backend/executor.hpp"
#include "tessera/backend/readiness.hpp"
#include "tessera/schedules/checker.hpp"

namespace tessera::backend::cuda {

// `visible_devices`: the GPUs this process sees. Under the mpi transport it joins MPI and agrees
// the answer with the other processes, so every process must call it.
Readiness cuda_readiness(const schedules::CheckedSchedule& checked, const ExecutorOptions& options, int visible_devices);

}  // namespace tessera::backend::cuda
