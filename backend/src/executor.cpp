#include "tessera/backend/executor.hpp"

#include "tessera/core/error.hpp"

#ifdef TESSERA_WITH_CUDA
#include "../cuda/cuda_executor.hpp"
#endif

namespace tessera::backend {

namespace {
class CpuExecutor final : public ScheduleExecutor {
 public:
  std::string name() const override { return "cpu"; }
  void execute(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
               AttentionTensors& tensors, ExecutionRecord& record) override {
    execute_on_cpu(schedule, grid, analysis, tensors, record);
  }
};
}  // namespace

Transport parse_transport(const std::string& text) {
  if (text == "local") return Transport::local;
  if (text == "nccl") return Transport::nccl;
  if (text == "mpi") return Transport::mpi;
  throw UserError("'" + text + "' is not a transport (expected local, nccl or mpi)");
}

std::string to_string(Transport transport) {
  switch (transport) {
    case Transport::local: return "local";
    case Transport::nccl: return "nccl";
    case Transport::mpi: return "mpi";
  }
  return "?";
}

bool cuda_executor_built() {
#ifdef TESSERA_WITH_CUDA
  return true;
#else
  return false;
#endif
}

std::unique_ptr<ScheduleExecutor> make_executor(const std::string& backend, const ExecutorOptions& options) {
  if (backend == "cpu") return std::make_unique<CpuExecutor>();
  if (backend != "cuda") throw UserError("'" + backend + "' is not a backend (expected cpu or cuda)");
#ifdef TESSERA_WITH_CUDA
  return cuda::make_cuda_executor(options);
#else
  (void)options;
  throw BackendUnavailable("this build has no CUDA executor (the CUDA toolkit and NCCL were not found when it was configured)");
#endif
}

}  // namespace tessera::backend
