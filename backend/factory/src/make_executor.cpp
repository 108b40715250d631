#include "tessera/backend/factory/make_executor.hpp"

#include "tessera/backend/cpu/cpu_executor.hpp"
#include "tessera/core/error.hpp"

#ifdef TESSERA_WITH_CUDA
#include "tessera/backend/cuda/cuda_executor.hpp"
#endif

namespace tessera::backend {

bool cuda_executor_built() {
#ifdef TESSERA_WITH_CUDA
  return true;
#else
  return false;
#endif
}

std::unique_ptr<ScheduleExecutor> make_executor(const std::string& backend, const ExecutorOptions& options) {
  if (backend == "cpu") return make_cpu_executor(options.devices);
  if (backend != "cuda") throw UserError("'" + backend + "' is not a backend (expected cpu or cuda)");
#ifdef TESSERA_WITH_CUDA
  return cuda::make_cuda_executor(options);
#else
  (void)options;
  throw BackendUnavailable("this build has no CUDA executor (the CUDA toolkit and NCCL were not found when it was configured)");
#endif
}

}  // namespace tessera::backend
