#pragma once
// The attention problem of one layer: shapes, precision, mask and pass.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/units.hpp"

namespace tessera {

enum class DType { bf16, fp16, fp32 };
enum class MaskKind { full, causal, sliding_window, documents };
enum class Pass { forward, backward, both };

int bytes_per_element(DType dtype);
std::string to_string(DType dtype);
std::string to_string(MaskKind mask);
std::string to_string(Pass pass);
DType parse_dtype(const std::string& text);        // throws UserError
MaskKind parse_mask_kind(const std::string& text);  // throws UserError
Pass parse_pass(const std::string& text);           // throws UserError

// Which (query, key) token pairs take part in attention.
//  full:           every pair.
//  causal:         key <= query.
//  sliding_window: causal and query - key < window_tokens.
//  documents:      causal inside each document; documents are consecutive runs of tokens
//                  whose lengths are document_lengths (they must sum to the sequence length).
struct Mask {
  MaskKind kind = MaskKind::causal;
  int64_t window_tokens = 0;
  std::vector<int64_t> document_lengths;
};

// How validate() names the fields in its messages: as a schedule file does by default, or as the
// command line does (kProblemFlagNames: "--batch must be positive, got 0").
struct ProblemFieldNames {
  const char* batch = "batch";
  const char* seq_len = "sequence length";
  const char* heads = "heads";
  const char* kv_heads = "kv-heads";
  const char* head_dim = "head-dim";
  const char* head_dim_v = "head-dim-v";
  const char* window = "window";
  const char* documents = "document lengths";
};
inline constexpr ProblemFieldNames kProblemFlagNames{"--batch",    "--seq",        "--heads",  "--kv-heads",
                                                     "--head-dim", "--head-dim-v", "--window", "--documents"};

// The largest problem: 2^31 tokens (pair counts, N^2, are 64-bit), and at most 2^48 bytes (256 TiB)
// in one copy of its activations and their gradients (problem_bytes), batch included. Every byte
// count the cost model and simulator sum (per GPU, per link, over all GPUs) then fits 64 bits.
inline constexpr int64_t kMaxSeqTokens = int64_t{1} << 31;
inline constexpr double kMaxProblemBytes = 281474976710656.0;  // 2^48

struct Problem {
  int64_t batch = 1;
  int64_t seq_len = 1 << 20;
  int64_t heads = 32;     // query heads H
  int64_t kv_heads = 8;   // key/value heads G (G < H: grouped-query attention)
  int64_t head_dim = 128;
  int64_t head_dim_v = 128;
  DType dtype = DType::bf16;
  Mask mask;
  Pass pass = Pass::both;

  bool has_forward() const { return pass != Pass::backward; }
  bool has_backward() const { return pass != Pass::forward; }
  // Throws UserError naming the first field that is out of range (by `names`).
  void validate(const ProblemFieldNames& names = {}) const;
};

// Bytes of Q, K, V, O, their gradients and the fp32 softmax statistics, over the whole batch: the
// size validate() bounds by kMaxProblemBytes. In double, so it never wraps.
double problem_bytes(const Problem& problem);

// Floating-point operations of attention over `pairs` unmasked (query, key) pairs of one head:
// forward QK^T and PV are 2*pairs*d + 2*pairs*d_v; backward recomputes QK^T and forms dV, dP,
// dQ, dK: 2*pairs*(3d + 2d_v), i.e. 2.5x the forward when d_v = d.
double forward_flops_per_head(const Problem& problem, double pairs);
double backward_flops_per_head(const Problem& problem, double pairs);

// parse_count and format_count ("1M" <-> 1048576) live in units.hpp, included above.

}  // namespace tessera
