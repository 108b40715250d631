#include "tessera/schedules/period_copies.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "tessera/schedules/analysis.hpp"
#include "tessera/schedules/item_sizes.hpp"
#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

namespace {

// The held ops cut where the pass changes, each run stored GPU by GPU (the generators emit a pass
// for every GPU in turn): the copies of a run follow it, so GPU g's ops of a pass come before
// GPU g + 1's, as the generator held at the larger period stores them.
struct PassRun {
  uint32_t first = 0, end = 0;  // the held ops [first, end)
  uint32_t copied_first = 0;    // where its first copy starts among the copies' ops
};

std::vector<PassRun> pass_runs(const Schedule& held, uint32_t copies) {
  std::vector<PassRun> runs;
  const auto op_count = static_cast<uint32_t>(held.ops.size());
  uint32_t copied = 0;
  for (uint32_t first = 0; first < op_count;) {
    uint32_t end = first + 1;
    while (end < op_count && held.ops[end].pass == held.ops[first].pass) {
      if (held.ops[end].gpu < held.ops[end - 1].gpu) return {};  // not GPU by GPU
      ++end;
    }
    runs.push_back(PassRun{first, end, copied});
    copied += (end - first) * copies;
    first = end;
  }
  return runs;
}

}  // namespace

std::optional<CheckedSchedule> held_at_period(const CheckedSchedule& checked, int32_t period) {
  const Schedule& held = checked.schedule();
  const int32_t own = held.period, gpus = held.gpus;
  if (held.form != ProgramForm::rotation || !held.collectives.empty() || own < 1 || period <= own || period >= gpus ||
      period % own != 0 || gpus % period != 0)
    return std::nullopt;
  const auto copies = static_cast<uint32_t>(period / own);
  if (held.ops.size() * copies > std::numeric_limits<uint32_t>::max()) return std::nullopt;  // op indices are 32-bit
  const std::vector<PassRun> runs = pass_runs(held, copies);
  if (runs.empty() && !held.ops.empty()) return std::nullopt;

  // Held op j's copy c (GPU j's + c * own): its index among the copies.
  std::vector<uint32_t> run_of(held.ops.size());
  for (uint32_t r = 0; r < runs.size(); ++r)
    for (uint32_t j = runs[r].first; j < runs[r].end; ++j) run_of[j] = r;
  auto copy_index = [&](uint32_t j, uint32_t copy) {
    const PassRun& run = runs[run_of[j]];
    return run.copied_first + copy * (run.end - run.first) + (j - run.first);
  };

  const ScheduleAnalysis& from = checked.analysis();
  const size_t op_count = held.ops.size() * copies;
  std::vector<Op> ops;
  std::vector<BlockRef> blocks;
  std::vector<DataItem> items;
  ops.reserve(op_count);
  blocks.reserve(held.blocks.size() * copies);
  items.reserve(held.items.size() * copies);
  auto analysis = std::make_shared<ScheduleAnalysis>();
  analysis->dep_offsets.reserve(op_count + 1);
  analysis->dep_offsets.push_back(0);
  auto& deps = analysis->deps;
  deps.reserve(from.deps.size() * copies);
  analysis->partner.reserve(op_count);
  for (const PassRun& run : runs) {
    for (uint32_t copy = 0; copy < copies; ++copy) {
      const int32_t shift = static_cast<int32_t>(copy) * own;
      for (uint32_t j = run.first; j < run.end; ++j) {
        Op op = held.ops[j];
        op.gpu += shift;
        if (op.kind == OpKind::compute) {
          op.first = static_cast<uint32_t>(blocks.size());
          for (const BlockRef& block : held.blocks_of(held.ops[j]))
            blocks.push_back(BlockRef{block.head_group, rotate(block.q_chunk, shift, gpus), rotate(block.kv_chunk, shift, gpus)});
        } else {
          if (op.kind == OpKind::send || op.kind == OpKind::recv) op.peer = rotate(op.peer, shift, gpus);
          op.first = static_cast<uint32_t>(items.size());
          for (const DataItem& item : held.items_of(held.ops[j])) items.push_back(rotate(item, shift, gpus));
        }
        // Dependencies are earlier ops of the same GPU (analysis.hpp): the same copy's.
        for (uint32_t dep : from.deps_of(j)) deps.push_back(copy_index(dep, copy));
        analysis->dep_offsets.push_back(static_cast<uint32_t>(deps.size()));
        // A send's recv runs on its peer, held at the larger period by the copy of the peer's held GPU.
        int32_t partner = -1;
        if (from.partner[j] >= 0) {
          const auto twin = static_cast<uint32_t>(from.partner[j]);
          const int32_t peer_held = base_gpu(op.peer, period);
          if (peer_held % own != held.ops[twin].gpu) return std::nullopt;  // (not a rotation's partner)
          partner = static_cast<int32_t>(copy_index(twin, static_cast<uint32_t>(peer_held / own)));
        }
        analysis->partner.push_back(partner);
        ops.push_back(op);
      }
    }
  }

  auto schedule = std::make_shared<Schedule>(held);  // the identity, streams and buffers; shares the program until replaced
  schedule->period = period;
  schedule->ops = std::move(ops);
  schedule->blocks = std::move(blocks);
  schedule->items = std::move(items);
  const BlockGrid& grid = checked.grid();
  // The steps: every copy of an op is at the held op's step, so the held step order, each op
  // followed by its copies, is an execution order (each op after its dependencies).
  std::vector<uint32_t> order;
  order.reserve(op_count);
  for (uint32_t j : from.step_order)
    for (uint32_t copy = 0; copy < copies; ++copy) order.push_back(copy_index(j, copy));
  analysis->step_order = order_by_step(*schedule, *analysis, std::move(order));
  analysis->item_sizes = ItemSizes(*schedule, grid);
  if (op_count <= kOpPairsTableMaxOps) analysis->op_pairs = op_pairs_table(*schedule, grid);
  // GPU g's memory is its held GPU's at either period (memory_peak.cpp repeats it by the period).
  analysis->memory_one_sequence = from.memory_one_sequence;
  return CheckedSchedule(std::move(schedule), checked.shared_grid(), std::move(analysis));
}

}  // namespace tessera::schedules
