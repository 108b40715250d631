// The simple (warp per row) kernels under the emulator, launched as launch_forward_block does.
#include "emulator.hpp"
#include "emulated_kernels.hpp"

#include "attention_kernels.cu"

namespace tessera::backend::cuda::emulated {

namespace {
dim3 warp_grid(const BlockShape& shape) {
  const int64_t warps = static_cast<int64_t>(shape.q_rows) * shape.heads;
  return dim3(static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock));
}
}  // namespace

void forward_simple(const ForwardArgs& args) {
  tessera_emulation::launch(warp_grid(args.shape), dim3(kWarp * kWarpsPerBlock), 0, [&] {
    switch (args.element) {
      case ElementType::fp32: forward_block_kernel<float>(args, static_cast<const float*>(args.q), static_cast<const float*>(args.kv)); break;
      case ElementType::bf16:
        forward_block_kernel<__nv_bfloat16>(args, static_cast<const __nv_bfloat16*>(args.q), static_cast<const __nv_bfloat16*>(args.kv));
        break;
      case ElementType::fp16: forward_block_kernel<__half>(args, static_cast<const __half*>(args.q), static_cast<const __half*>(args.kv)); break;
    }
  });
}

void backward_simple(const BackwardArgs& args) {
  tessera_emulation::launch(warp_grid(args.shape), dim3(kWarp * kWarpsPerBlock), 0, [&] {
    switch (args.element) {
      case ElementType::fp32:
        backward_block_kernel<float>(args, static_cast<const float*>(args.q), static_cast<const float*>(args.kv),
                                     static_cast<const float*>(args.d_out));
        break;
      case ElementType::bf16:
        backward_block_kernel<__nv_bfloat16>(args, static_cast<const __nv_bfloat16*>(args.q), static_cast<const __nv_bfloat16*>(args.kv),
                                             static_cast<const __nv_bfloat16*>(args.d_out));
        break;
      case ElementType::fp16:
        backward_block_kernel<__half>(args, static_cast<const __half*>(args.q), static_cast<const __half*>(args.kv),
                                      static_cast<const __half*>(args.d_out));
        break;
    }
  });
}

void merge_outputs(float* into, const float* from, int64_t row_heads, int32_t head_dim_v) {
  // As launch_merge_outputs: a thread per (row, head), 256 a block.
  tessera_emulation::launch(dim3(static_cast<unsigned>((row_heads + 255) / 256)), dim3(256), 0,
                            [&] { merge_outputs_kernel(into, from, row_heads, head_dim_v); });
}

}  // namespace tessera::backend::cuda::emulated
