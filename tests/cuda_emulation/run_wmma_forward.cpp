// The tensor-core forward kernel under the emulator, launched as attention_wmma.cu's launcher does.
#include "emulator.hpp"
#include "emulated_kernels.hpp"

#include "attention_wmma.cu"

namespace tessera::backend::cuda::emulated {

namespace {
template <typename T, int D>
void run(const ForwardArgs& args) {
  const dim3 grid(static_cast<unsigned>((args.shape.q_rows + kRows - 1) / kRows), static_cast<unsigned>(args.shape.heads));
  tessera_emulation::launch(grid, dim3(kWarps * 32), shared_bytes<T, D>(), [&] {
    forward_wmma_kernel<T, D>(args, static_cast<const T*>(args.q), static_cast<const T*>(args.kv));
  });
}
}  // namespace

void forward_tensor_cores(const ForwardArgs& args) {
  const bool bf16 = args.element == ElementType::bf16;
  if (args.shape.head_dim == 64) bf16 ? run<__nv_bfloat16, 64>(args) : run<__half, 64>(args);
  else bf16 ? run<__nv_bfloat16, 128>(args) : run<__half, 128>(args);
}

}  // namespace tessera::backend::cuda::emulated
