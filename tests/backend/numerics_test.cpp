// The pass criterion every numerics check uses (backend/numerics.hpp) and the reference's size
// limit, on hand-made errors whose verdicts follow from the rule: each output the pass computes
// within 2 x max(its single-device error, 1e-6).
#include <catch2/catch.hpp>

#include <limits>

#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::backend;

namespace {
Problem problem_with(Pass pass) {
  Problem problem;
  problem.seq_len = 48;
  problem.heads = 2;
  problem.kv_heads = 1;
  problem.head_dim = 8;
  problem.head_dim_v = 8;
  problem.dtype = DType::bf16;
  problem.mask.kind = MaskKind::causal;
  problem.pass = pass;
  return problem;
}
OutputErrors all(double error) { return {error, error, error, error, error}; }
}  // namespace

TEST_CASE("the verdict passes errors up to twice the single device's and fails beyond", "[backend][numerics]") {
  const Problem both = problem_with(Pass::both);
  const OutputErrors single = all(1e-4);
  CHECK(numerics_verdict(both, all(1.5e-4), single).passed);
  CHECK(numerics_verdict(both, all(2e-4), single).passed);  // exactly the limit
  OutputErrors one_bad = all(1e-4);
  one_bad.d_k = 2.5e-4;
  const NumericsVerdict verdict = numerics_verdict(both, one_bad, single);
  CHECK_FALSE(verdict.passed);
  CHECK(std::string(verdict.worst_output) == "dK");
  CHECK(verdict.worst_ratio == Approx(2.5));
}

TEST_CASE("single-device errors below 1e-6 count as 1e-6", "[backend][numerics]") {
  const Problem forward = problem_with(Pass::forward);
  CHECK(numerics_verdict(forward, all(2e-6), all(0)).passed);
  CHECK_FALSE(numerics_verdict(forward, all(2.1e-6), all(0)).passed);
  CHECK(worst_error_ratio(all(3e-6), all(1e-9)) == Approx(3));
}

TEST_CASE("the verdict judges only the outputs the pass computes", "[backend][numerics]") {
  // A backward-only run carries O and LSE as inputs; a forward-only run computes no gradient.
  OutputErrors forward_wrong = all(1e-4);
  forward_wrong.out = forward_wrong.lse = 1;
  CHECK(numerics_verdict(problem_with(Pass::backward), forward_wrong, all(1e-4)).passed);
  CHECK_FALSE(numerics_verdict(problem_with(Pass::forward), forward_wrong, all(1e-4)).passed);
  OutputErrors backward_wrong = all(1e-4);
  backward_wrong.d_q = 1;
  CHECK(numerics_verdict(problem_with(Pass::forward), backward_wrong, all(1e-4)).passed);
  CHECK_FALSE(numerics_verdict(problem_with(Pass::both), backward_wrong, all(1e-4)).passed);
}

TEST_CASE("a NaN or a missing output is an infinite error and fails", "[backend][numerics]") {
  AttentionTensors result, reference;
  reference.out = {1.0, 2.0};
  reference.lse = {0.5};
  result.out = {1.0, std::numeric_limits<double>::quiet_NaN()};
  result.lse = {};  // never filled
  const OutputErrors errors = output_errors(result, reference);
  CHECK(errors.out == std::numeric_limits<double>::infinity());
  CHECK(errors.lse == std::numeric_limits<double>::infinity());
  CHECK(errors.d_q == 0);  // neither side has one
  CHECK_FALSE(numerics_verdict(problem_with(Pass::forward), errors, all(1e-4)).passed);
}

TEST_CASE("a backward-only run from the reference leaves O and LSE as they came", "[backend][numerics]") {
  const Problem problem = problem_with(Pass::backward);
  const ReferenceCase made = reference_case(problem, 21);
  schedules::GeneratorOptions options;
  options.gpus = 3;
  const schedules::CheckedSchedule checked = schedules::generate_checked("ring", problem, options);
  auto executor = make_executor("cpu", {});
  REQUIRE(executor->can_run(checked).ok());
  ExecutionRecord record;
  const AttentionTensors result = run_from_reference(*executor, checked, made.inputs, made.reference, record);
  const OutputErrors errors = output_errors(result, made.reference);
  CHECK(errors.out == 0);
  CHECK(errors.lse == 0);
  CHECK(errors.d_q > 0);  // computed in fp32 against fp64
  CHECK(errors.d_q < 1e-4);
}

TEST_CASE("the fp64 reference refuses problems beyond its size limit, with the work in words", "[backend][numerics]") {
  // seq^2 x heads x head_dim multiply-adds: 10,000^2 x 25 x 16 = 4e10 is the limit itself.
  Problem problem = problem_with(Pass::forward);
  problem.seq_len = 10000;
  problem.heads = 25;
  problem.kv_heads = 25;
  problem.head_dim = 16;
  CHECK(reference_pair_work(problem) == 4e10);
  CHECK(reference_readiness(problem).ok());
  problem.head_dim = 18;  // 4.5e10
  const Readiness refused = reference_readiness(problem);
  CHECK(refused.refusal() == Readiness::Refusal::unsupported);
  CHECK(refused.reason() == "the fp64 reference would need ~45 G multiply-adds per pass on the CPU");
  CHECK_THROWS_AS(require_ready(refused), UserError);
  CHECK_NOTHROW(require_ready(Readiness::ready()));
  CHECK_THROWS_AS(require_ready(Readiness::unavailable("no GPU")), BackendUnavailable);
}
