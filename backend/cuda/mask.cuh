#pragma once
// The attention mask evaluated from token positions, shared by the kernels (device code only).
#include "attention_kernels.hpp"

namespace tessera::backend::cuda {

__device__ inline bool mask_allows(const MaskArgs& mask, int64_t query, int64_t key) {
  switch (mask.kind) {
    case 0: return true;
    case 1: return key <= query;
    case 2: return key <= query && query - key < mask.window_tokens;
    case 3: return key <= query && mask.document_of_token[key] == mask.document_of_token[query];
  }
  return false;
}

}  // namespace tessera::backend::cuda
