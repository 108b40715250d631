// The threaded CPU executor (each rank a thread, ranks on cores) against the sequential
// interpreter it replaced: the same schedule on the same inputs gives the same outputs bit for
// bit. Exact equality is expected, not a tolerance: every partial is computed by one thread in
// its stream's order, and the folds into one partial (block after block, merge after merge)
// follow the schedule's dependencies, which fix their order whatever the threads' interleaving;
// floating-point results depend only on that order.
#include <catch2/catch.hpp>

#include <cstring>

#include "tessera/backend/cpu/cpu_executor.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/rank_devices.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::backend;
using namespace tessera::schedules;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

TEST_CASE("the threaded CPU executor's outputs equal the sequential interpreter's bit for bit", "[backend][threads]") {
  Problem problem;
  problem.seq_len = 97;
  problem.heads = 4;
  problem.kv_heads = 2;
  problem.head_dim = problem.head_dim_v = 8;
  problem.dtype = DType::bf16;
  problem.pass = Pass::both;
  problem.mask.kind = MaskKind::causal;
  AttentionTensors inputs = random_inputs(problem, 5);
  AttentionTensors reference = inputs;
  dense_attention(problem, reference, true);
  inputs.out = reference.out;
  inputs.lse = reference.lse;
  int compared = 0;
  for (const char* algorithm : {"ring", "all-gather", "ulysses", "usp", "attention2d", "mesh"}) {
    for (int32_t gpus : {2, 4, 8}) {
      GeneratorOptions options;
      options.gpus = gpus;
      options.layout = Layout::zigzag;
      CheckedSchedule checked = [&] {
        try {
          return generate_checked(algorithm, problem, options);
        } catch (const UserError&) {
          return generate_checked("ring", problem, options);  // (ulysses needs heads % P == 0)
        }
      }();
      AttentionTensors sequential = inputs;
      execute_on_cpu_sequentially(checked, sequential);
      // One core for all ranks, two, and a core per rank: the same bits each time.
      for (int32_t devices : {1, 2, gpus}) {
        for (int repeat = 0; repeat < 3; ++repeat) {
          AttentionTensors threaded = inputs;
          ExecutionRecord record;
          execute_on_cpu(checked, threaded, record, devices);
          INFO(checked.schedule().name() << " on " << devices << " devices, run " << repeat);
          CHECK(record.devices == devices);
          CHECK(record.device_of_rank == ranks_on_devices(gpus, devices));
          CHECK(same_bits(threaded.out, sequential.out));
          CHECK(same_bits(threaded.lse, sequential.lse));
          CHECK(same_bits(threaded.d_q, sequential.d_q));
          CHECK(same_bits(threaded.d_k, sequential.d_k));
          CHECK(same_bits(threaded.d_v, sequential.d_v));
          CHECK_FALSE(threaded.d_k.empty());
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 6 * 3 * 3 * 3);
}

TEST_CASE("the threaded CPU executor runs ranks at the same time", "[backend][threads]") {
  // Four ranks of a ring on four devices, 16 blocks of 256 x 256 tokens: compute ops of
  // different ranks overlap in time (a sequential interpreter never overlaps two ops). When
  // each thread gets going depends on the OS, so no particular pair is required to overlap.
  Problem problem;
  problem.seq_len = 1024;
  problem.heads = 2;
  problem.kv_heads = 2;
  problem.head_dim = problem.head_dim_v = 32;
  problem.pass = Pass::forward;
  problem.mask.kind = MaskKind::full;
  GeneratorOptions options;
  options.gpus = 4;
  const CheckedSchedule checked = generate_checked("ring", problem, options);
  AttentionTensors tensors = random_inputs(problem, 3);
  ExecutionRecord record;
  execute_on_cpu(checked, tensors, record, 4);
  const Schedule& schedule = checked.schedule();
  int overlapping = 0;
  for (size_t a = 0; a < schedule.ops.size(); ++a)
    for (size_t b = a + 1; b < schedule.ops.size(); ++b)
      if (schedule.ops[a].kind == OpKind::compute && schedule.ops[b].kind == OpKind::compute &&
          schedule.ops[a].gpu != schedule.ops[b].gpu && record.op_start_s[a] < record.op_finish_s[b] &&
          record.op_start_s[b] < record.op_finish_s[a])
        ++overlapping;
  CHECK(overlapping > 0);
}
