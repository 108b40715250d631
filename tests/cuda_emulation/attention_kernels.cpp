// backend/cuda/attention_kernels.cu compiled as C++ for the CPU emulator (the fake CUDA headers in fake/ and
// TESSERA_CUDA_EMULATION make its launches run on tessera_emulation::launch).
#include "attention_kernels.cu"
