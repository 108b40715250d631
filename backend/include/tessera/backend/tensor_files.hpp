#pragma once
// A run's tensors as .npy files in a folder (npy_file.hpp), so that any schedule's result can be
// checked against NumPy or PyTorch attention, and a run can start from given inputs. One
// sequence (batch 1), tokens in sequence order (not the layout's chunk order), C order:
//   Q.npy, dQ.npy   [1, seq, heads, head_dim]
//   K.npy, dK.npy   [1, seq, kv_heads, head_dim]      query head h reads KV head h / (heads / kv_heads)
//   V.npy, dV.npy   [1, seq, kv_heads, head_dim_v]
//   dO.npy, O.npy   [1, seq, heads, head_dim_v]
//   LSE.npy         [1, seq, heads]   natural log of the softmax denominator of the scaled scores
// with scores q.k / sqrt(head_dim) and the problem's mask. Inputs are written as float32, holding
// exactly the dtype-rounded values the executors compute on (bf16 and fp16 fit in float32);
// outputs as float64, as the executors hand them over.
#include <string>

#include "tessera/backend/tensors.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::backend {

// Creates the folder (and its parents) and checks that files can be written in it, before a run
// starts. UserError naming it when it cannot.
void create_tensor_folder(const std::string& folder);

// Writes the inputs (Q, K, V, and dO when the problem has a backward pass) rounded to the
// problem's dtype, and every output `outputs` holds (O and LSE; dQ, dK, dV when computed).
// Creates the folder. UserError naming the folder or file when it cannot.
void save_tensor_files(const std::string& folder, const Problem& problem, const AttentionTensors& inputs,
                       const AttentionTensors& outputs);

// Q, K, V (and dO when the problem has a backward pass; zeros otherwise) from the folder, each
// checked against the problem's shape and for finite values. UserError naming the file:
// "DIR/Q.npy: shape (1, 64, 2, 32) but the problem needs (1, 128, 2, 32) (--seq, --heads, --head-dim)".
AttentionTensors load_tensor_files(const std::string& folder, const Problem& problem);

}  // namespace tessera::backend
