#pragma once
// Executors by name, for front ends that let the user choose: the factory sits above the CPU
// and CUDA executor libraries, which know nothing of each other.
#include <memory>
#include <string>

#include "tessera/backend/executor.hpp"

namespace tessera::backend {

// "cpu" or "cuda". Throws BackendUnavailable when this build or this machine cannot run it
// (no CUDA executor built, no GPU found), UserError for an unknown name.
std::unique_ptr<ScheduleExecutor> make_executor(const std::string& backend, const ExecutorOptions& options);

// True when this build contains the CUDA executor (whether or not a GPU is present).
bool cuda_executor_built();

}  // namespace tessera::backend
