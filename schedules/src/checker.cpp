#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/memory_peak.hpp"

#include <algorithm>
#include <cstdint>

#include "flat_map.hpp"
#include "tessera/core/resource_limits.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

namespace {

// One key for (GPU, item): 20 bits of GPU above the item's own key bits (kind, group, chunk).
uint64_t place(int32_t gpu, const DataItem& item) {
  return (static_cast<uint64_t>(gpu) << 44) | (static_cast<uint64_t>(item.kind) << 40) |
         (static_cast<uint64_t>(item.head_group) << 24) | static_cast<uint64_t>(item.chunk);
}

// Held by rotation (ProgramForm::rotation), a block (i, j) of a GPU held stands for
// (i + t, j + t) for every shift t by a multiple of the period: it covers the class of blocks
// with query chunk i mod period and diagonal j - i (mod P), which has work all along or nowhere
// on a grid invariant under those shifts. In full, every block is its own class (the period is
// P). Each class with work must be covered once; (q, kv) with q < period names each class once.
std::string check_block_coverage(const Schedule& schedule, const BlockGrid& grid) {
  const bool rotation = schedule.form == ProgramForm::rotation;
  const int64_t n = grid.chunks();
  const int64_t period = rotation ? schedule.period : n;
  if (rotation && !grid_is_rotation_invariant(grid, schedule.period))
    return "the schedule is held by rotation (the programs of " + std::to_string(period) +
           " GPU(s) alone), but its chunks differ in tokens or its blocks in pairs under a shift by " +
           std::to_string(period) + ", so not every GPU's work is a held GPU's shifted";
  auto class_of = [&](int32_t head_group, int64_t q, int64_t kv) {
    const int64_t diagonal = kv >= q ? kv - q : kv - q + n;
    return static_cast<size_t>((head_group * period + q % period) * n + diagonal);
  };
  const std::string shifted = rotation ? " (the GPUs held stand for every GPU, shifted)" : "";
  for (Pass pass : {Pass::forward, Pass::backward}) {
    const bool wanted = pass == Pass::forward ? schedule.problem.has_forward() : schedule.problem.has_backward();
    std::vector<int32_t> computed_by(static_cast<size_t>(schedule.head_groups * period * n), -1);  // op index
    const std::string pass_name = to_string(pass);
    for (const auto& op : schedule.ops) {
      if (op.kind != OpKind::compute || op.pass != pass) continue;
      if (!wanted)
        return schedule.describe(op) + " computes a " + pass_name + " block, but the problem's pass is " +
               to_string(schedule.problem.pass);
      for (const auto& block : schedule.blocks_of(op)) {
        if (!grid.has_work(block.q_chunk, block.kv_chunk))
          return schedule.describe(op) + " computes block " + to_string(block) +
                 ", which is fully masked (no work) and must not be scheduled";
        const size_t slot = class_of(block.head_group, block.q_chunk, block.kv_chunk);
        if (computed_by[slot] >= 0)
          return "block " + to_string(block) + " " + pass_name + " is computed twice: by " +
                 schedule.describe(schedule.ops[static_cast<size_t>(computed_by[slot])]) + " and by " +
                 schedule.describe(op) + shifted;
        computed_by[slot] = static_cast<int32_t>(schedule.index_of(op));
      }
    }
    if (!wanted) continue;
    for (int32_t hg = 0; hg < schedule.head_groups; ++hg)
      for (int64_t i = 0; i < period; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (grid.has_work(i, j) && computed_by[class_of(hg, i, j)] < 0)
            return "block " + to_string(BlockRef{hg, static_cast<int32_t>(i), static_cast<int32_t>(j)}) + " " +
                   pass_name + " (" + std::to_string(grid.pairs(i, j)) + " pairs per head) is never computed" +
                   (rotation ? ", on any GPU" : "");
  }
  return "";
}

// A position among a collective's partials (the accumulator items of its transfers, transfer by
// transfer), so that a walk can look ahead of itself without listing them.
class PartialCursor {
 public:
  PartialCursor(const Schedule& schedule, const Collective& collective) : schedule_(schedule), collective_(collective) {}
  // Moves to the first partial at or after the position; false when none is left.
  bool settle() {
    for (; transfer_ < collective_.transfers.size(); ++transfer_, item_ = 0) {
      const auto items = schedule_.items_of(collective_.transfers[transfer_]);
      for (; item_ < items.size(); ++item_)
        if (is_accumulator(items[item_].kind)) return true;
    }
    return false;
  }
  void next() { ++item_; }  // past the partial settled on
  const Transfer& transfer() const { return collective_.transfers[transfer_]; }
  const DataItem& item() const { return schedule_.items_of(transfer())[item_]; }

 private:
  const Schedule& schedule_;
  const Collective& collective_;
  size_t transfer_ = 0, item_ = 0;
};

// Held by rotation, the programs held are replayed: what a GPU sends to GPU d arrives, shifted
// by -(d - d mod period), on GPU d mod period (match_rotated_transfers), and the outputs of the
// chunks of the GPUs held stand for every chunk's.
std::string check_outputs(const Schedule& schedule, const BlockGrid& grid, const std::vector<uint32_t>& order) {
  const bool rotation = schedule.form == ProgramForm::rotation;
  detail::FlatMap local(static_cast<size_t>(schedule.gpus) * 64), inbox(static_cast<size_t>(schedule.gpus) * 8);
  // Blocks covered per (GPU, item): a compute op adds its blocks to partial sums; repeated
  // keys in a row (blocks of one row) are added in one step.
  std::vector<std::pair<uint64_t, int64_t>> additions;
  auto add = [&](uint64_t key) {
    if (!additions.empty() && additions.back().first == key) {
      ++additions.back().second;
    } else {
      additions.emplace_back(key, 1);
    }
  };
  std::vector<uint8_t> collective_done(schedule.collectives.size(), 0);
  std::vector<std::pair<uint64_t, int64_t>> carried;

  auto take = [&](int32_t gpu, const DataItem& item, const Op& op, int64_t& value) -> std::string {
    int64_t* held = local.find(place(gpu, item));
    if (held == nullptr && op.kind == OpKind::collective) {
      // A collective moves fixed-shape buffers: a partial this GPU has no blocks of goes as
      // zeros (if it had been sent away before, the owner's output comes up short below).
      value = 0;
      return "";
    }
    if (held == nullptr)
      return schedule.describe(op) + " sends the partial " + to_string(item) + ", which GPU " + std::to_string(gpu) +
             " no longer holds (it was sent away before)";
    value = *held;
    local.erase(place(gpu, item));
    return "";
  };
  for (uint32_t index : order) {
    const Op& op = schedule.ops[index];
    switch (op.kind) {
      case OpKind::compute: {
        additions.clear();
        for (const auto& block : schedule.blocks_of(op))
          add(place(op.gpu, {op.pass == Pass::forward ? DataKind::O : DataKind::dQ, block.head_group, block.q_chunk}));
        if (op.pass == Pass::backward)
          for (const auto& block : schedule.blocks_of(op))
            add(place(op.gpu, {DataKind::dKV, block.head_group, block.kv_chunk}));
        for (const auto& [key, count] : additions) {
          local[key] += count;
          // LSE travels with O and covers the same blocks.
          if (op.pass == Pass::forward) local[key ^ (static_cast<uint64_t>(DataKind::O) << 40) ^
                                              (static_cast<uint64_t>(DataKind::LSE) << 40)] += count;
        }
        break;
      }
      case OpKind::send: {
        // The matching recv completes right after this send (see find_execution_order), so
        // the partials it carries wait on a small stack.
        for (const auto& item : schedule.items_of(op)) {
          if (!is_accumulator(item.kind)) continue;
          int64_t value = 0;
          if (auto problem = take(op.gpu, item, op, value); !problem.empty()) return problem;
          if (!rotation) {
            carried.emplace_back(place(op.peer, item), value);
            continue;
          }
          const int32_t held = base_gpu(op.peer, schedule.period);
          carried.emplace_back(place(held, rotate(item, held - op.peer, schedule.gpus)), value);
        }
        break;
      }
      case OpKind::recv: {
        // The matching send completed just before; its partials are the last ones carried.
        size_t partials = 0;
        for (const auto& item : schedule.items_of(op)) partials += is_accumulator(item.kind) ? 1 : 0;
        for (size_t k = carried.size() - partials; k < carried.size(); ++k) inbox[carried[k].first] += carried[k].second;
        carried.resize(carried.size() - partials);
        break;
      }
      case OpKind::merge:
        for (const auto& item : schedule.items_of(op)) {
          int64_t* arrived = inbox.find(place(op.gpu, item));
          if (arrived == nullptr) continue;
          int64_t value = *arrived;
          inbox.erase(place(op.gpu, item));
          local[place(op.gpu, item)] += value;
        }
        break;
      case OpKind::collective: {
        auto c = static_cast<size_t>(op.peer);
        if (collective_done[c]) break;
        collective_done[c] = 1;
        // Its partials move transfer by transfer, and the sums the move kLookahead on will
        // touch are fetched while one moves (a reduce-scatter of 1 x 1,024 moves two million).
        constexpr size_t kLookahead = 16;
        const Collective& collective = schedule.collectives[c];
        PartialCursor at(schedule, collective), ahead(schedule, collective);
        for (size_t k = 0; k < kLookahead && ahead.settle(); ++k) ahead.next();
        while (at.settle()) {
          if (ahead.settle()) {
            local.prefetch(place(ahead.transfer().src, ahead.item()));
            inbox.prefetch(place(ahead.transfer().dst, ahead.item()));
            ahead.next();
          }
          int64_t value = 0;
          if (auto problem = take(at.transfer().src, at.item(), op, value); !problem.empty()) return problem;
          inbox[place(at.transfer().dst, at.item())] += value;
          at.next();
        }
        break;
      }
    }
  }

  if (inbox.size() > 0) {
    uint64_t first = UINT64_MAX;  // report the smallest key, so the message is deterministic
    inbox.for_each([&](uint64_t key, int64_t) { first = std::min(first, key); });
    int32_t gpu = static_cast<int32_t>(first >> 44);
    DataItem item{static_cast<DataKind>((first >> 40) & 0xF), static_cast<int32_t>((first >> 24) & 0xFFFF),
                  static_cast<int32_t>(first & 0xFFFFFF)};
    return "GPU " + std::to_string(gpu) + " received the partial " + to_string(item) + " but never merged it";
  }
  const int64_t n = grid.chunks();
  std::vector<int64_t> row_blocks(static_cast<size_t>(n), 0), column_blocks(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (grid.has_work(i, j)) {
        ++row_blocks[static_cast<size_t>(i)];
        ++column_blocks[static_cast<size_t>(j)];
      }
  std::vector<DataKind> outputs;
  if (schedule.problem.has_forward()) outputs.insert(outputs.end(), {DataKind::O, DataKind::LSE});
  if (schedule.problem.has_backward()) outputs.insert(outputs.end(), {DataKind::dQ, DataKind::dKV});
  for (DataKind kind : outputs) {
    for (int32_t hg = 0; hg < schedule.head_groups; ++hg) {
      for (int32_t chunk = 0; chunk < (rotation ? schedule.period : n); ++chunk) {
        DataItem item{kind, hg, chunk};
        const int32_t owner = schedule.owner(chunk);
        int64_t expected = kind == DataKind::dKV ? column_blocks[static_cast<size_t>(chunk)]
                                                 : row_blocks[static_cast<size_t>(chunk)];
        const int64_t* held = local.find(place(owner, item));
        int64_t covered = held == nullptr ? 0 : *held;
        if (covered != expected) {
          std::string text = "output " + to_string(item) + " on its owner GPU " + std::to_string(owner) + " covers " +
                             std::to_string(covered) + " of its " + std::to_string(expected) + " blocks";
          for (int32_t gpu = 0; gpu < schedule.gpus; ++gpu) {
            const int64_t* other = gpu == owner ? nullptr : local.find(place(gpu, item));
            if (other != nullptr && *other > 0) {
              text += "; a partial covering " + std::to_string(*other) + " blocks was left on GPU " +
                      std::to_string(gpu);
              break;
            }
          }
          return text;
        }
      }
    }
  }
  return "";
}

}  // namespace

CheckResult check_schedule(const Schedule& schedule, const BlockGrid& grid) {
  CheckResult result;
  if (grid.chunks() != schedule.chunks()) {
    result.violation = "the block grid has " + std::to_string(grid.chunks()) + " chunks but the schedule " +
                       std::to_string(schedule.chunks());
    return result;
  }
  // Each op's accesses are listed by the dependency walk and again by the memory walk; op_data's
  // lists (the costly ones) are kept between the two, up to 16 MiB.
  OpAccesses listed(schedule, std::size_t{16} << 20);
  result.violation = analyze_schedule(schedule, result.analysis, listed);
  if (!result.ok()) return result;
  result.violation = check_block_coverage(schedule, grid);
  if (!result.ok()) return result;
  // The execution order serves the outputs' walk and then the steps, which take its room.
  std::vector<uint32_t> order;
  result.violation = find_execution_order(schedule, result.analysis, order);
  if (!result.ok()) return result;
  result.violation = check_outputs(schedule, grid, order);
  if (!result.ok()) return result;
  result.analysis.step_order = order_by_step(schedule, result.analysis, std::move(order));
  result.analysis.item_sizes = ItemSizes(schedule, grid);
  if (schedule.ops.size() <= kOpPairsTableMaxOps) result.analysis.op_pairs = op_pairs_table(schedule, grid);
  result.analysis.memory_one_sequence = memory_per_gpu_one_sequence(schedule, result.analysis, listed);
  return result;
}

CheckedSchedule check(Schedule schedule) { return check(std::move(schedule), nullptr); }

CheckedSchedule check(Schedule schedule, std::shared_ptr<const BlockGrid> grid) {
  // A schedule read from a file names its GPU count: its grid and analysis must fit.
  require_memory(estimate_check_bytes(schedule), "checking schedule '" + schedule.name() + "' on " +
                                                     std::to_string(schedule.gpus) + " GPUs");
  auto owned = std::make_shared<const Schedule>(std::move(schedule));
  if (grid == nullptr || !grid->is_grid_of(owned->problem, owned->layout, owned->chunks()))
    grid = std::make_shared<const BlockGrid>(owned->problem, owned->layout, owned->chunks());
  CheckResult result = check_schedule(*owned, *grid);
  if (!result.ok()) throw InvalidSchedule(result.violation);
  return CheckedSchedule(std::move(owned), std::move(grid),
                         std::make_shared<const ScheduleAnalysis>(std::move(result.analysis)));
}

CheckedSchedule with_batch(const CheckedSchedule& checked, int64_t batch) {
  auto schedule = std::make_shared<Schedule>(checked.schedule());
  schedule->problem.batch = batch;
  auto grid = std::make_shared<const BlockGrid>(checked.grid().with_batch(batch));
  return CheckedSchedule(std::move(schedule), std::move(grid), checked.analysis_);
}

}  // namespace tessera::schedules
