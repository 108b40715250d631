#include "tessera/core/problem.hpp"

#include <cstdio>
#include <numeric>

#include "tessera/core/error.hpp"

namespace tessera {

int bytes_per_element(DType dtype) {
  switch (dtype) {
    case DType::bf16:
    case DType::fp16: return 2;
    case DType::fp32: return 4;
  }
  return 2;
}

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
  }
  return "?";
}

std::string to_string(MaskKind mask) {
  switch (mask) {
    case MaskKind::full: return "full";
    case MaskKind::causal: return "causal";
    case MaskKind::sliding_window: return "sliding-window";
    case MaskKind::documents: return "documents";
  }
  return "?";
}

std::string to_string(Pass pass) {
  switch (pass) {
    case Pass::forward: return "forward";
    case Pass::backward: return "backward";
    case Pass::both: return "both";
  }
  return "?";
}

DType parse_dtype(const std::string& text) {
  if (text == "bf16") return DType::bf16;
  if (text == "fp16") return DType::fp16;
  if (text == "fp32") return DType::fp32;
  throw UserError("dtype '" + text + "' is not one of bf16, fp16, fp32");
}

MaskKind parse_mask_kind(const std::string& text) {
  if (text == "full") return MaskKind::full;
  if (text == "causal") return MaskKind::causal;
  if (text == "sliding-window" || text == "sliding_window" || text == "window") return MaskKind::sliding_window;
  if (text == "documents" || text == "docs") return MaskKind::documents;
  throw UserError("mask '" + text + "' is not one of full, causal, sliding-window, documents");
}

Pass parse_pass(const std::string& text) {
  if (text == "forward" || text == "fwd") return Pass::forward;
  if (text == "backward" || text == "bwd") return Pass::backward;
  if (text == "both" || text == "fwd+bwd") return Pass::both;
  throw UserError("pass '" + text + "' is not one of forward, backward, both");
}

void Problem::validate(const ProblemFieldNames& names) const {
  auto positive = [](int64_t value, const char* name) {
    if (value <= 0) throw UserError(std::string(name) + " must be positive, got " + std::to_string(value));
  };
  positive(batch, names.batch);
  positive(seq_len, names.seq_len);
  positive(heads, names.heads);
  positive(kv_heads, names.kv_heads);
  positive(head_dim, names.head_dim);
  positive(head_dim_v, names.head_dim_v);
  // Pair counts are 64-bit: N^2 must fit, so N stops at 2^31 tokens (2.1 billion).
  if (seq_len > kMaxSeqTokens)
    throw UserError(std::string(names.seq_len) + " " + std::to_string(seq_len) + " is above the supported 2^31 tokens");
  if (heads % kv_heads != 0)
    throw UserError(std::string(names.heads) + " (" + std::to_string(heads) + ") must be a multiple of " +
                    names.kv_heads + " (" + std::to_string(kv_heads) + ")");
  if (mask.kind == MaskKind::sliding_window) {
    if (mask.window_tokens <= 0)
      throw UserError("sliding-window mask needs a positive window (--window), got " + std::to_string(mask.window_tokens));
    // The pair count subtracts the window from token indices: it must stay a token count.
    if (mask.window_tokens > kMaxSeqTokens)
      throw UserError(std::string(names.window) + " " + std::to_string(mask.window_tokens) +
                      " is above the supported 2^31 tokens");
  }
  if (mask.kind == MaskKind::documents) {
    if (mask.document_lengths.empty()) throw UserError("documents mask needs document lengths (--documents)");
    int64_t total = 0;
    for (size_t index = 0; index < mask.document_lengths.size(); ++index) {
      const int64_t length = mask.document_lengths[index];
      if (length <= 0)
        throw UserError("document " + std::to_string(index) + " has length " + std::to_string(length) +
                        "; lengths must be positive");
      if (__builtin_add_overflow(total, length, &total))
        throw UserError(std::string(names.documents) + " sum past 2^63 - 1 but the sequence length is " +
                        std::to_string(seq_len));
    }
    if (total != seq_len)
      throw UserError(std::string(names.documents) + " sum to " + std::to_string(total) +
                      " but the sequence length is " + std::to_string(seq_len));
  }
  const double bytes = problem_bytes(*this);
  if (!(bytes <= kMaxProblemBytes)) {
    char text[160];
    std::snprintf(text, sizeof text, "%.3g bytes of activations and gradients, above the supported 2^48 (256 TiB)", bytes);
    throw UserError(std::string(names.batch) + " x " + names.seq_len + " x (" + names.heads + " + " + names.kv_heads +
                    ") x (" + names.head_dim + " + " + names.head_dim_v + "): the problem holds " + text);
  }
}

double problem_bytes(const Problem& problem) {
  const auto value = [](int64_t count) { return static_cast<double>(count); };
  const double dims = value(problem.head_dim) + value(problem.head_dim_v);
  const double element = bytes_per_element(problem.dtype);
  // Per token: Q and O over the query heads, K and V over the KV heads, LSE and the backward
  // statistics (fp32, 1 + 2 per query head); the gradients double the activations.
  const double activations = (value(problem.heads) + value(problem.kv_heads)) * dims * element;
  const double statistics = value(problem.heads) * 3 * 4;
  return value(problem.batch) * value(problem.seq_len) * (2 * activations + statistics);
}

double forward_flops_per_head(const Problem& problem, double pairs) {
  return 2.0 * pairs * static_cast<double>(problem.head_dim + problem.head_dim_v);
}

double backward_flops_per_head(const Problem& problem, double pairs) {
  return 2.0 * pairs * static_cast<double>(3 * problem.head_dim + 2 * problem.head_dim_v);
}

}  // namespace tessera
