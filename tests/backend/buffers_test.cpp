// Bounded buffers in the CPU executor: replaying the executor's own trace, no rank ever holds
// more remote chunks on a receive stream than the schedule's buffers, and the results still
// equal dense attention. A receive holds its buffer from when it runs until every op that frees
// it (schedules::buffer_releases) has run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "tessera/backend/executor.hpp"
#include "tessera/backend/factory/make_executor.hpp"
#include "tessera/backend/numerics.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::backend;
using namespace tessera::schedules;

namespace {

Problem causal_problem(Pass pass) {
  Problem problem;
  problem.seq_len = 96;
  problem.heads = 4;
  problem.kv_heads = 2;
  problem.head_dim = 16;
  problem.head_dim_v = 16;
  problem.dtype = DType::fp32;
  problem.mask.kind = MaskKind::causal;
  problem.pass = pass;
  return problem;
}

// The interpreter runs one op at a time, so its trace is a sequence: ops sorted by their
// recorded start (ties, within the clock's resolution, by the order they were run in). A
// receive holds a buffer from its place in the sequence until after its last release.
int32_t most_buffers_held(const Schedule& schedule, const ScheduleAnalysis& analysis, const BufferReleases& freeing,
                          const ExecutionRecord& record) {
  const std::vector<uint32_t> order = execution_order(schedule, analysis);
  std::vector<size_t> run_position(schedule.ops.size());
  for (size_t position = 0; position < order.size(); ++position) run_position[order[position]] = position;
  std::vector<uint32_t> sequence(order.begin(), order.end());
  std::stable_sort(sequence.begin(), sequence.end(), [&](uint32_t x, uint32_t y) {
    return record.op_start_s[x] < record.op_start_s[y] ||
           (record.op_start_s[x] == record.op_start_s[y] && run_position[x] < run_position[y]);
  });
  std::vector<size_t> place(schedule.ops.size());
  for (size_t position = 0; position < sequence.size(); ++position) place[sequence[position]] = position;
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<size_t, int>>> events;
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    if (op.kind != OpKind::recv) continue;
    size_t freed = place[index];
    for (uint32_t release : freeing.of(index)) freed = std::max(freed, place[release]);
    auto& list = events[{op.gpu, op.stream}];
    list.emplace_back(place[index], +1);
    list.emplace_back(freed + 1, -1);  // free once its last release has run
  }
  int32_t most = 0;
  for (auto& [key, list] : events) {
    std::sort(list.begin(), list.end());  // at one place, a release comes before a receive
    int32_t held = 0;
    for (const auto& [position, change] : list) most = std::max(most, held += change);
  }
  return most;
}

struct Executed {
  int32_t most_held = 0;
  double error = 0;
};

Executed execute(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  const CheckedSchedule checked = generate_checked(algorithm, problem, options);
  const Schedule& schedule = checked.schedule();
  AttentionTensors inputs = random_inputs(schedule.problem, 11);
  AttentionTensors reference = inputs;
  dense_attention(schedule.problem, reference, true);
  inputs.out = reference.out;
  inputs.lse = reference.lse;
  AttentionTensors result = inputs;
  ExecutionRecord record;
  make_executor("cpu", {})->execute(checked, result, record);
  Executed executed;
  executed.most_held = most_buffers_held(schedule, checked.analysis(), buffer_releases(schedule), record);
  if (problem.has_forward()) executed.error = std::max(executed.error, max_abs_error(result.out, reference.out));
  if (problem.has_backward()) executed.error = std::max(executed.error, max_abs_error(result.d_k, reference.d_k));
  return executed;
}

}  // namespace

TEST_CASE("the CPU executor holds no more remote chunks per stream than the buffers", "[backend][buffers]") {
  for (Pass pass : {Pass::forward, Pass::backward})
    for (const std::string& variant : {"pass-kv", "pass-q"})
      for (int32_t buffers : {2, 3}) {
        GeneratorOptions options;
        options.gpus = 6;
        options.layout = Layout::zigzag;
        options.variant = variant;
        options.buffers = buffers;
        INFO(variant << ", " << to_string(pass) << ", " << buffers << " buffers");
        const Executed executed = execute("ring", causal_problem(pass), options);
        CHECK(executed.most_held <= buffers);
        CHECK(executed.error < 1e-4);
      }
  // USP's ring part is bounded the same way.
  GeneratorOptions usp;
  usp.gpus = 6;
  usp.tile = TileShape{2, 3};
  CHECK(execute("usp", causal_problem(Pass::both), usp).most_held <= 2);
  // The measure is not vacuous: with two buffers the interpreter does take the next chunk
  // while it still holds the current one (double buffering).
  GeneratorOptions double_buffered;
  double_buffered.gpus = 6;
  CHECK(execute("ring", causal_problem(Pass::forward), double_buffered).most_held == 2);
}
