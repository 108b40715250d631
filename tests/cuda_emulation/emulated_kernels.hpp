#pragma once
// The block attention kernels of backend/cuda, compiled as C++ and run by the CPU emulator with
// the launch shapes their real launchers use. Each call runs one block like one kernel launch.
#include "attention_kernels.hpp"

namespace tessera::backend::cuda::emulated {

void forward_simple(const ForwardArgs& args);
void backward_simple(const BackwardArgs& args);
// into = LSE-weighted merge of two O accumulators (O [row_heads][dv] then LSE [row_heads]).
void merge_outputs(float* into, const float* from, int64_t row_heads, int32_t head_dim_v);
// bf16/fp16 with head_dim = head_dim_v of 64 or 128, as launch_*_tensor_cores accept.
void forward_tensor_cores(const ForwardArgs& args);
void backward_tensor_cores(const BackwardArgs& args);

}  // namespace tessera::backend::cuda::emulated
