#pragma once
// Every kernel launch goes through here: on a GPU it is `kernel<<<...>>>`; under the tests' CPU
// emulation (tests/cuda_emulation) the emulator runs the kernel's threads instead, so the same
// launchers, with the same grid shapes and dispatch, are exercised on machines without a GPU.
#include <utility>

#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                          Args&&... args) {
#ifdef TESSERA_CUDA_EMULATION
  // Queued on its stream with copies of the arguments, as a real launch is.
  return tessera_emulation::enqueue_launch(stream, [=] {
    tessera_emulation::launch(grid, block, shared_bytes, [&] { kernel(static_cast<Params>(args)...); });
  });
#else
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
  return cudaGetLastError();
#endif
}

}  // namespace tessera::backend::cuda
