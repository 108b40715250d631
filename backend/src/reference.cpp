#include "tessera/backend/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace tessera::backend {

namespace {
constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();
}  // namespace

bool attends(const Mask& mask, const DocumentBounds& documents, int64_t query, int64_t key) {
  switch (mask.kind) {
    case MaskKind::full: return true;
    case MaskKind::causal: return key <= query;
    case MaskKind::sliding_window: return key <= query && query - key < mask.window_tokens;
    case MaskKind::documents: return key <= query && documents.document_of(key) == documents.document_of(query);
  }
  return false;
}

void dense_attention(const Problem& problem, AttentionTensors& t, bool backward) {
  const int64_t N = t.tokens, H = t.heads, G = t.kv_heads, d = t.head_dim, dv = t.head_dim_v;
  DocumentBounds documents;
  if (problem.mask.kind == MaskKind::documents) documents = DocumentBounds(problem.mask.document_lengths);
  // The reference sees the same dtype-rounded inputs as the executors.
  auto rounded = [&](const std::vector<double>& values) {
    std::vector<double> out(values.size());
    for (size_t index = 0; index < values.size(); ++index) out[index] = round_to_dtype(problem.dtype, values[index]);
    return out;
  };
  const auto q = rounded(t.q), k = rounded(t.k), v = rounded(t.v), d_out = rounded(t.d_out);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  t.out.assign(static_cast<size_t>(N * H * dv), 0);
  t.lse.assign(static_cast<size_t>(N * H), 0);
  if (backward) {
    t.d_q.assign(static_cast<size_t>(N * H * d), 0);
    t.d_k.assign(static_cast<size_t>(N * G * d), 0);
    t.d_v.assign(static_cast<size_t>(N * G * dv), 0);
  }
  std::vector<double> p(static_cast<size_t>(N));
  for (int64_t h = 0; h < H; ++h) {
    const int64_t kvh = h / (H / G);
    for (int64_t i = 0; i < N; ++i) {
      double maximum = kMinusInfinity;
      for (int64_t j = 0; j < N; ++j) {
        if (!attends(problem.mask, documents, i, j)) {
          p[static_cast<size_t>(j)] = kMinusInfinity;
          continue;
        }
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) dot += q[static_cast<size_t>((i * H + h) * d + e)] * k[static_cast<size_t>((j * G + kvh) * d + e)];
        p[static_cast<size_t>(j)] = dot * scale;
        maximum = std::max(maximum, p[static_cast<size_t>(j)]);
      }
      double total = 0;
      for (int64_t j = 0; j < N; ++j)
        if (p[static_cast<size_t>(j)] != kMinusInfinity) total += std::exp(p[static_cast<size_t>(j)] - maximum);
      const double lse = maximum + std::log(total);
      t.lse[static_cast<size_t>(i * H + h)] = lse;
      for (int64_t j = 0; j < N; ++j) {
        if (p[static_cast<size_t>(j)] == kMinusInfinity) continue;
        double weight = std::exp(p[static_cast<size_t>(j)] - lse);
        for (int64_t e = 0; e < dv; ++e)
          t.out[static_cast<size_t>((i * H + h) * dv + e)] += weight * v[static_cast<size_t>((j * G + kvh) * dv + e)];
      }
      if (!backward) continue;
      double delta = 0;
      for (int64_t e = 0; e < dv; ++e)
        delta += d_out[static_cast<size_t>((i * H + h) * dv + e)] * t.out[static_cast<size_t>((i * H + h) * dv + e)];
      for (int64_t j = 0; j < N; ++j) {
        if (p[static_cast<size_t>(j)] == kMinusInfinity) continue;
        const double prob = std::exp(p[static_cast<size_t>(j)] - lse);
        double dp = 0;
        for (int64_t e = 0; e < dv; ++e) {
          const double g_out = d_out[static_cast<size_t>((i * H + h) * dv + e)];
          dp += g_out * v[static_cast<size_t>((j * G + kvh) * dv + e)];
          t.d_v[static_cast<size_t>((j * G + kvh) * dv + e)] += prob * g_out;
        }
        const double ds = prob * (dp - delta) * scale;
        for (int64_t e = 0; e < d; ++e) {
          t.d_q[static_cast<size_t>((i * H + h) * d + e)] += ds * k[static_cast<size_t>((j * G + kvh) * d + e)];
          t.d_k[static_cast<size_t>((j * G + kvh) * d + e)] += ds * q[static_cast<size_t>((i * H + h) * d + e)];
        }
      }
    }
  }
}

ReferenceCase reference_case(const Problem& problem, uint64_t seed) {
  return reference_case(problem, random_inputs(problem, seed));
}

ReferenceCase reference_case(const Problem& problem, AttentionTensors inputs) {
  ReferenceCase made{std::move(inputs), {}};
  made.reference = made.inputs;
  dense_attention(problem, made.reference, problem.has_backward());
  return made;
}

double reference_pair_work(const Problem& problem) {
  return static_cast<double>(problem.seq_len) * static_cast<double>(problem.seq_len) * static_cast<double>(problem.heads) *
         static_cast<double>(problem.head_dim);
}

Readiness reference_readiness(const Problem& problem) {
  const double work = reference_pair_work(problem);
  if (work <= kMaxReferencePairWork) return Readiness::ready();
  char giga[32];
  std::snprintf(giga, sizeof giga, "%.0f", work / 1e9);
  return Readiness::unsupported(std::string("the fp64 reference would need ~") + giga +
                                " G multiply-adds per pass on the CPU");
}

}  // namespace tessera::backend
