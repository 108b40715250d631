#pragma once
// CUDA and NCCL errors as exceptions that name what was being done (the op, in the schedule's
// words), so a failure in op 1234 of a 250,000-op schedule can be found.
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace tessera::backend::cuda {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess)
    throw CudaError("CUDA error in " + what + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

inline void check_nccl(ncclResult_t status, const std::string& what) {
  if (status != ncclSuccess) throw CudaError("NCCL error in " + what + ": " + ncclGetErrorString(status));
}

// Visible CUDA devices, 0 when there is no driver or no GPU (never throws).
inline int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

// Restores the calling thread's current GPU when a scope ends, however it ends.
class CurrentDeviceScope {
 public:
  CurrentDeviceScope() { cudaGetDevice(&device_); }
  ~CurrentDeviceScope() { cudaSetDevice(device_); }
  CurrentDeviceScope(const CurrentDeviceScope&) = delete;
  CurrentDeviceScope& operator=(const CurrentDeviceScope&) = delete;

 private:
  int device_ = 0;
};

}  // namespace tessera::backend::cuda
