// The CPU reference executor runs every generator's schedules on real tensors; the result is
// compared with dense attention in fp64 on the same (dtype-rounded) inputs. Criterion of
// research/peers.md 3 (backend/numerics.hpp): the distributed error stays within 2x the error
// of a single-device computation at the same precision (a 1-GPU schedule through the same
// executor).
#include <catch2/catch.hpp>

#include "tessera/backend/cpu/cpu_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::backend;
using namespace tessera::schedules;

namespace {

OutputErrors run_and_compare(const std::string& algorithm, const Problem& problem, int32_t gpus, Layout layout,
                             const AttentionTensors& reference, const AttentionTensors& inputs) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = layout;
  const CheckedSchedule checked = generate_checked(algorithm, problem, options);
  AttentionTensors tensors = inputs;
  tensors.out = reference.out;  // the backward's Stats come from the forward's O and LSE
  tensors.lse = reference.lse;
  execute_on_cpu(checked, tensors);
  return output_errors(tensors, reference);
}

Problem numerics_problem(MaskKind mask, int64_t seq_len, int64_t heads, int64_t kv_heads) {
  Problem problem;
  problem.seq_len = seq_len;
  problem.heads = heads;
  problem.kv_heads = kv_heads;
  problem.head_dim = 16;
  problem.head_dim_v = 16;
  problem.dtype = DType::bf16;
  problem.pass = Pass::both;
  problem.mask.kind = mask;
  if (mask == MaskKind::sliding_window) problem.mask.window_tokens = 9;
  if (mask == MaskKind::documents) problem.mask.document_lengths = {7, 1, 20, seq_len - 28};
  return problem;
}

}  // namespace

TEST_CASE("a 1-GPU schedule reproduces dense attention to fp32 accuracy", "[backend]") {
  Problem problem = numerics_problem(MaskKind::causal, 61, 4, 2);
  AttentionTensors inputs = random_inputs(problem, 7);
  AttentionTensors reference = inputs;
  dense_attention(problem, reference, true);
  OutputErrors errors = run_and_compare("ring", problem, 1, Layout::contiguous, reference, inputs);
  // fp32 arithmetic on O(1) values over ~61 terms: errors of order 1e-6, far below bf16's 4e-3.
  CHECK(errors.out < 1e-5);
  CHECK(errors.lse < 1e-5);
  CHECK(errors.d_q < 1e-4);
  CHECK(errors.d_k < 1e-4);
  CHECK(errors.d_v < 1e-4);
  CHECK(errors.out > 0);  // fp32 is not fp64: a zero error would mean the reference was copied
}

TEST_CASE("every generator computes attention: error within 2x of a single device", "[backend]") {
  const std::string algorithm = GENERATE(as<std::string>{}, "ring", "all-gather", "ulysses", "usp", "attention2d", "mesh");
  for (MaskKind mask : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::documents}) {
    for (auto [heads, kv_heads] : std::vector<std::pair<int64_t, int64_t>>{{12, 12}, {12, 2}}) {
      const int64_t seq_len = 61;  // odd, not a multiple of any GPU count below
      Problem problem = numerics_problem(mask, seq_len, heads, kv_heads);
      AttentionTensors inputs = random_inputs(problem, 1234);
      AttentionTensors reference = inputs;
      dense_attention(problem, reference, true);
      const OutputErrors single = run_and_compare("ring", problem, 1, Layout::contiguous, reference, inputs);
      for (int32_t gpus : {1, 2, 3, 4, 6, 8, 9, 16}) {
        if (algorithm == "ulysses" && heads % gpus != 0) continue;
        if (algorithm == "ulysses" && kv_heads % gpus != 0 && gpus % kv_heads != 0) continue;
        for (Layout layout : {Layout::contiguous, Layout::zigzag, Layout::striped}) {
          OutputErrors errors;
          try {
            errors = run_and_compare(algorithm, problem, gpus, layout, reference, inputs);
          } catch (const UserError&) {
            continue;  // does not apply (e.g. usp with no valid split)
          }
          INFO(algorithm << " P=" << gpus << " " << to_string(mask) << " " << to_string(layout) << " H=" << heads
                         << " G=" << kv_heads);
          const NumericsVerdict verdict = numerics_verdict(problem, errors, single);
          INFO("worst: " << verdict.worst_output << ", " << verdict.worst_ratio << "x the single-device error");
          CHECK(verdict.passed);
        }
      }
    }
  }
}

TEST_CASE("odd sequence lengths: 1000 and 1021 tokens through every generator", "[backend]") {
  for (int64_t seq_len : {1000, 1021}) {
    Problem problem = numerics_problem(MaskKind::causal, seq_len, 6, 2);
    problem.head_dim = problem.head_dim_v = 8;
    AttentionTensors inputs = random_inputs(problem, 99);
    AttentionTensors reference = inputs;
    dense_attention(problem, reference, true);
    const OutputErrors single = run_and_compare("ring", problem, 1, Layout::contiguous, reference, inputs);
    for (const char* algorithm : {"ring", "all-gather", "ulysses", "usp", "attention2d", "mesh"}) {
      for (int32_t gpus : {1, 6}) {
        const OutputErrors errors = run_and_compare(algorithm, problem, gpus, Layout::zigzag, reference, inputs);
        const NumericsVerdict verdict = numerics_verdict(problem, errors, single);
        INFO(algorithm << " P=" << gpus << " N=" << seq_len << "; worst: " << verdict.worst_output << ", "
                       << verdict.worst_ratio << "x the single-device error");
        CHECK(verdict.passed);
      }
    }
  }
}
