// backend/cuda/attention_mma.cu compiled as C++ for the CPU emulator (the fake CUDA headers in fake/ and
// TESSERA_CUDA_EMULATION make its launches run on tessera_emulation::launch).
#include "attention_mma.cu"
