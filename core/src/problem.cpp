#include "tessera/core/problem.hpp"

#include <cctype>
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

void Problem::validate() const {
  auto positive = [](int64_t value, const char* name) {
    if (value <= 0) throw UserError(std::string(name) + " must be positive, got " + std::to_string(value));
  };
  positive(batch, "batch");
  positive(seq_len, "sequence length");
  positive(heads, "heads");
  positive(kv_heads, "kv-heads");
  positive(head_dim, "head-dim");
  positive(head_dim_v, "head-dim-v");
  // Pair counts are 64-bit: N^2 must fit, so N stops at 2^31 tokens (2.1 billion).
  if (seq_len > (int64_t{1} << 31))
    throw UserError("sequence length " + std::to_string(seq_len) + " is above the supported 2^31 tokens");
  if (heads % kv_heads != 0)
    throw UserError("heads (" + std::to_string(heads) + ") must be a multiple of kv-heads (" +
                    std::to_string(kv_heads) + ")");
  if (mask.kind == MaskKind::sliding_window && mask.window_tokens <= 0)
    throw UserError("sliding-window mask needs a positive window (--window), got " +
                    std::to_string(mask.window_tokens));
  if (mask.kind == MaskKind::documents) {
    if (mask.document_lengths.empty()) throw UserError("documents mask needs document lengths (--documents)");
    int64_t total = 0;
    for (size_t index = 0; index < mask.document_lengths.size(); ++index) {
      if (mask.document_lengths[index] <= 0)
        throw UserError("document " + std::to_string(index) + " has length " +
                        std::to_string(mask.document_lengths[index]) + "; lengths must be positive");
      total += mask.document_lengths[index];
    }
    if (total != seq_len)
      throw UserError("document lengths sum to " + std::to_string(total) + " but the sequence length is " +
                      std::to_string(seq_len));
  }
}

double forward_flops_per_head(const Problem& problem, double pairs) {
  return 2.0 * pairs * static_cast<double>(problem.head_dim + problem.head_dim_v);
}

double backward_flops_per_head(const Problem& problem, double pairs) {
  return 2.0 * pairs * static_cast<double>(3 * problem.head_dim + 2 * problem.head_dim_v);
}

int64_t parse_count(const std::string& text) {
  if (text.empty()) throw UserError("expected a number such as 4096, 128K or 1M, got an empty value");
  size_t end = 0;
  int64_t value = 0;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
    int digit = text[end] - '0';
    if (value > (INT64_MAX - digit) / 10) throw UserError("number '" + text + "' is too large");
    value = value * 10 + digit;
    ++end;
  }
  if (end == 0) throw UserError("expected a number such as 4096, 128K or 1M, got '" + text + "'");
  int64_t multiplier = 1;
  std::string suffix = text.substr(end);
  if (suffix == "" ) multiplier = 1;
  else if (suffix == "K" || suffix == "k") multiplier = int64_t{1} << 10;
  else if (suffix == "M" || suffix == "m") multiplier = int64_t{1} << 20;
  else if (suffix == "G" || suffix == "g") multiplier = int64_t{1} << 30;
  else throw UserError("number '" + text + "' has an unknown suffix '" + suffix + "' (expected K, M or G)");
  if (value > INT64_MAX / multiplier) throw UserError("number '" + text + "' is too large");
  return value * multiplier;
}

std::string format_count(int64_t count) {
  const char* suffixes[] = {"", "K", "M", "G"};
  int index = 0;
  while (index < 3 && count != 0 && count % 1024 == 0) {
    count /= 1024;
    ++index;
  }
  return std::to_string(count) + suffixes[index];
}

}  // namespace tessera
