#pragma once
// The reference numerics: dense attention in fp64 on the same dtype-rounded inputs the
// executors see. Every executor's outputs are measured against it (numerics.hpp).
#include <cstdint>

#include "tessera/backend/readiness.hpp"
#include "tessera/backend/tensors.hpp"
#include "tessera/core/pair_count.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::backend {

// Whether `query` attends to `key` under the mask: the rule every executor and the reference
// apply token by token. `documents` is read only for document masks.
bool attends(const Mask& mask, const DocumentBounds& documents, int64_t query, int64_t key);

// Dense attention in fp64: O and LSE, and when `backward`, dQ, dK, dV. The mask and GQA follow
// the problem.
void dense_attention(const Problem& problem, AttentionTensors& tensors, bool backward);

// Seeded random inputs and the reference computed from them: what a numerics run starts from
// and is measured against.
struct ReferenceCase {
  AttentionTensors inputs, reference;
};
ReferenceCase reference_case(const Problem& problem, uint64_t seed);
// The same from given inputs (read from files: tensor_files.hpp).
ReferenceCase reference_case(const Problem& problem, AttentionTensors inputs);

// The reference visits every (query, key) pair on the CPU: its work is seq^2 x heads x
// head_dim multiply-adds per pass, and runs are kept to what it finishes in about a minute.
constexpr double kMaxReferencePairWork = 4e10;
double reference_pair_work(const Problem& problem);
// Unsupported, with the work in words, beyond kMaxReferencePairWork.
Readiness reference_readiness(const Problem& problem);

}  // namespace tessera::backend
