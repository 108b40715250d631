#include "tessera/schedules/memory_peak.hpp"

#include <algorithm>
#include <stdexcept>

#include "tessera/schedules/op_data.hpp"

namespace tessera::schedules {

// Resident: the GPU's own chunks, inputs and outputs, held throughout. Transfer buffers, on top:
// a received input until its last use; a partial of another GPU's chunk from its first write
// until it is sent away; an arriving partial until it is merged. GPUs are independent here, so
// one dense table per GPU (reset between GPUs) replaces any hashing.
std::vector<GpuMemory> memory_per_gpu_one_sequence(const Schedule& schedule, const ScheduleAnalysis& analysis,
                                                   OpAccesses& listed) {
  const size_t gpus = static_cast<size_t>(schedule.gpus);
  const ItemSizes& sizes = analysis.item_sizes;
  auto item_bytes = [&sizes](const DataItem& item) { return sizes.one_sequence_bytes(item); };
  // Each GPU's ops in step order (analysis.hpp): a stable counting sort of it by GPU.
  const std::vector<uint32_t>& step_order = analysis.step_order;
  if (step_order.size() != schedule.ops.size())
    throw std::logic_error("memory_per_gpu_one_sequence: the analysis has no step order (check_schedule makes it)");
  std::vector<uint32_t> gpu_offsets(gpus + 1, 0);
  for (uint32_t index : step_order) ++gpu_offsets[static_cast<size_t>(schedule.ops[index].gpu) + 1];
  for (size_t g = 0; g < gpus; ++g) gpu_offsets[g + 1] += gpu_offsets[g];
  std::vector<uint32_t> by_gpu(step_order.size());
  {
    std::vector<uint32_t> fill(gpu_offsets.begin(), gpu_offsets.end() - 1);
    for (uint32_t index : step_order) by_gpu[fill[static_cast<size_t>(schedule.ops[index].gpu)]++] = index;
  }
  std::vector<GpuMemory> peak(gpus);
  const bool forward = schedule.problem.has_forward(), backward = schedule.problem.has_backward();
  const ItemSlots slot(schedule);
  std::vector<int64_t> held(item_slot_count(schedule), 0);  // bytes held per slot, beyond own chunks
  // One GPU's accesses (analysis.hpp's OpAccesses), its ops in step order, listed once per GPU:
  // ops_at[k] .. ops_at[k + 1] are those of its k-th op.
  std::vector<DataAccess> accesses;
  std::vector<uint32_t> ops_at;
  // Per access of the GPU: the last read of a received input before it is received again (the
  // forward's KV copy is freed after the forward even when the backward receives the same chunk
  // later).
  std::vector<uint8_t> last_read;
  std::vector<uint8_t> read_follows(item_slot_count(schedule) / 2, 0);
  std::vector<size_t> touched;

  std::vector<DataKind> own_kinds{DataKind::Q, DataKind::KV};
  if (forward) own_kinds.insert(own_kinds.end(), {DataKind::O, DataKind::LSE});
  if (backward) own_kinds.insert(own_kinds.end(), {DataKind::dO, DataKind::Stats, DataKind::dQ, DataKind::dKV});

  // Held by rotation, GPU g runs GPU (g mod period)'s program shifted, on chunks as large.
  const size_t walked = schedule.form == ProgramForm::rotation ? static_cast<size_t>(schedule.period) : gpus;
  for (size_t g = 0; g < walked; ++g) {
    const auto gpu = static_cast<int32_t>(g);
    int64_t resident = 0;
    for (int32_t hg = 0; hg < schedule.head_groups; ++hg)
      for (DataKind kind : own_kinds) resident += item_bytes(DataItem{kind, hg, gpu});
    int64_t live = 0, highest = 0;
    std::fill(read_follows.begin(), read_follows.end(), 0);
    accesses.clear();
    ops_at.assign(1, 0);
    for (uint32_t k = gpu_offsets[g]; k < gpu_offsets[g + 1]; ++k) {
      listed.append(by_gpu[k], accesses);
      ops_at.push_back(static_cast<uint32_t>(accesses.size()));
    }
    last_read.assign(accesses.size(), 0);
    for (size_t k = ops_at.size() - 1; k-- > 0;) {
      for (uint32_t a = ops_at[k]; a < ops_at[k + 1]; ++a) {
        const DataAccess& access = accesses[a];
        if (is_accumulator(access.kind()) || access.chunk() == gpu) continue;
        uint8_t& follows = read_follows[slot(access.item(), false)];
        if (access.access() == Access::read) {
          last_read[a] = follows ? 0 : 1;
          follows = 1;
        } else if (access.access() == Access::write) {
          follows = 0;
        }
      }
    }
    auto hold = [&](const DataItem& item, bool inbox) {
      int64_t& bytes = held[slot(item, inbox)];
      if (bytes != 0) return;
      bytes = item_bytes(item);
      live += bytes;
      touched.push_back(slot(item, inbox));
    };
    auto release = [&](const DataItem& item, bool inbox) {
      int64_t& bytes = held[slot(item, inbox)];
      live -= bytes;
      bytes = 0;
    };
    for (uint32_t k = gpu_offsets[g]; k < gpu_offsets[g + 1]; ++k) {
      const uint32_t index = by_gpu[k];
      const Op& op = schedule.ops[index];
      const bool moves_out = op.kind == OpKind::send || op.kind == OpKind::collective;
      const uint32_t first = ops_at[k - gpu_offsets[g]], last = ops_at[k - gpu_offsets[g] + 1];
      for (uint32_t a = first; a < last; ++a) {
        const DataAccess& access = accesses[a];
        if (access.access() == Access::inbox_write) hold(access.item(), true);
        if (access.access() != Access::write) continue;
        if (access.chunk() == gpu) continue;                        // resident
        if (moves_out && is_accumulator(access.kind())) continue;  // it leaves, below
        hold(access.item(), false);
      }
      highest = std::max(highest, live);
      for (uint32_t a = first; a < last; ++a) {
        const DataAccess& access = accesses[a];
        if (access.access() == Access::inbox_read) release(access.item(), true);
        if (access.access() == Access::write && moves_out && is_accumulator(access.kind()) && access.chunk() != gpu)
          release(access.item(), false);
        if (access.access() == Access::read && last_read[a]) release(access.item(), false);
      }
    }
    peak[g] = GpuMemory{resident, highest};
    for (size_t index : touched) held[index] = 0;
    touched.clear();
  }
  for (size_t g = walked; g < gpus; ++g) peak[g] = peak[g % walked];
  return peak;
}

}  // namespace tessera::schedules
