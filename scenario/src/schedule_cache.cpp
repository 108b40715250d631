#include "tessera/scenario/schedule_cache.hpp"

#include <bit>
#include <exception>
#include <future>

namespace tessera::scenario {

using schedules::CheckedSchedule;
using schedules::GeneratorOptions;

namespace {

// What a held failure counts against the bound: its key and message, about.
constexpr size_t kFailureBytes = 512;

template <typename T, typename Allocator>
size_t vector_bytes(const std::vector<T, Allocator>& values) {
  return values.capacity() * sizeof(T);
}

template <typename T>
size_t vector_bytes(const SharedVector<T>& values) {
  return vector_bytes(values.vector());
}

}  // namespace

struct ScheduleCache::Entry {
  std::shared_future<CheckedSchedule> result;
  std::list<ScheduleKey>::iterator position;  // in recency_
  size_t bytes = 0;
  bool ready = false;  // built (or failed) and accounted; only ready entries are evicted
  std::shared_ptr<const schedules::MeshProgram> mesh_program;  // the plan it was emitted from (Mesh)
};

ScheduleKey schedule_key(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options) {
  ScheduleKey key;
  key.algorithm = algorithm;
  // Only generators that read the batch are keyed by it (see generate_checked).
  key.batch = schedules::generator_reads_batch(algorithm) ? problem.batch : 0;
  key.seq_len = problem.seq_len;
  key.heads = problem.heads;
  key.kv_heads = problem.kv_heads;
  key.head_dim = problem.head_dim;
  key.head_dim_v = problem.head_dim_v;
  key.dtype = static_cast<int>(problem.dtype);
  key.mask = static_cast<int>(problem.mask.kind);
  key.pass = static_cast<int>(problem.pass);
  key.window_tokens = problem.mask.window_tokens;
  key.document_lengths = problem.mask.document_lengths;
  key.gpus = options.gpus;
  if (options.layout) key.layout = static_cast<int>(*options.layout);
  if (options.tile) {
    key.tile_first = options.tile->first;
    key.tile_second = options.tile->second;
  }
  key.variant = options.variant;
  key.buffers = options.buffers;
  // Only the ring, Mesh, USP and one-ring ATTENTION2D generators read it; other schedules are
  // the same with it or without, and so is USP with one Ulysses group (u = P, its period the
  // whole).
  const bool reads_rotation = algorithm == "ring" || algorithm == "mesh" ||
                              (algorithm == "usp" && schedules::usp_ulysses_degree(problem, options) < options.gpus) ||
                              (algorithm == "attention2d" && schedules::attention2d_is_one_ring(options));
  key.by_rotation = reads_rotation && options.by_rotation;
  key.rotation_period = key.by_rotation ? options.rotation_period : 0;
  // Only Mesh's planner weighs transfers against compute (generate_mesh reads plan_hardware).
  if (algorithm == "mesh") {
    const schedules::PlanHardware& hardware = options.plan_hardware;
    for (double figure : {hardware.flops_per_s, hardware.q_ring_bytes_per_s, hardware.kv_ring_bytes_per_s,
                          hardware.q_ring_latency_s, hardware.kv_ring_latency_s})
      key.plan_hardware_bits.push_back(std::bit_cast<uint64_t>(figure));
  }
  if (options.mesh_hops) {
    key.has_mesh_hops = true;
    key.forward_hops = options.mesh_hops->forward;
    key.backward_hops = options.mesh_hops->backward;
  }
  return key;
}

namespace {
// The key with its batch cleared: what the schedules of one program at every batch share.
ScheduleKey batchless(ScheduleKey key) {
  key.batch = 0;
  return key;
}
}  // namespace

bool cacheable(const std::string& algorithm) { return algorithm != "file" && algorithm != "assignment"; }

size_t held_bytes(const CheckedSchedule& checked) {
  const Schedule& schedule = checked.schedule();
  size_t bytes = sizeof(Schedule) + vector_bytes(schedule.ops) + vector_bytes(schedule.blocks) +
                 vector_bytes(schedule.items) + vector_bytes(schedule.collectives) +
                 vector_bytes(schedule.stream_names) + vector_bytes(schedule.stream_buffers);
  for (const Collective& collective : schedule.collectives)
    bytes += vector_bytes(collective.members) + vector_bytes(collective.transfers);
  // The grid: a token set and count per chunk, and its pair count per block.
  const auto chunks = static_cast<size_t>(checked.grid().chunks());
  bytes += sizeof(BlockGrid) + chunks * (sizeof(TokenSet) + 2 * sizeof(TokenProgression) + sizeof(int64_t)) +
           chunks * chunks * sizeof(int64_t);
  const schedules::ScheduleAnalysis& analysis = checked.analysis();
  bytes += sizeof(analysis) + vector_bytes(analysis.dep_offsets) + vector_bytes(analysis.deps) + vector_bytes(analysis.partner) +
           vector_bytes(analysis.collective_ops) + vector_bytes(analysis.step_order) +
           vector_bytes(analysis.memory_one_sequence) + analysis.item_sizes.table_bytes() + vector_bytes(analysis.op_pairs);
  for (const auto& members : analysis.collective_ops) bytes += vector_bytes(members);
  return bytes;
}

ScheduleCache::ScheduleCache(size_t max_bytes) : max_bytes_(max_bytes) {}
ScheduleCache::~ScheduleCache() = default;

ScheduleCache::Stats ScheduleCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  stats.entries = entries_.size();
  return stats;
}

CheckedSchedule ScheduleCache::generate_checked(const std::string& algorithm, const Problem& problem,
                                                const GeneratorOptions& options) {
  if (max_bytes_ == 0 || !cacheable(algorithm)) return schedules::generate_checked(algorithm, problem, options);
  ScheduleKey key = schedule_key(algorithm, problem, options);
  // A schedule whose generator does not read the batch is held once for every batch size and
  // handed out at the batch asked for (schedules::with_batch): a sweep over batch sizes then
  // generates and checks each schedule once. The problem is validated here first, so that an
  // error of this batch (too large a problem) is thrown to this caller alone, never held for
  // the others.
  if (!schedules::generator_reads_batch(algorithm)) problem.validate();
  auto at_batch = [&](const CheckedSchedule& held) {
    return held.schedule().problem.batch == problem.batch ? held : schedules::with_batch(held, problem.batch);
  };
  std::shared_ptr<Entry> entry, building;
  std::promise<CheckedSchedule> promise;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = entries_.find(key); found != entries_.end()) {
      entry = found->second;
      recency_.splice(recency_.begin(), recency_, entry->position);
      ++stats_.hits;
    } else {
      entry = std::make_shared<Entry>();
      entry->result = promise.get_future().share();
      recency_.push_front(key);
      entry->position = recency_.begin();
      entries_.emplace(key, entry);
      ++stats_.misses;
      building = std::move(entry);  // this thread builds it
    }
  }
  if (entry) return at_batch(entry->result.get());  // waits for the build; rethrows its failure

  try {
    bool shared = false;
    std::shared_ptr<const schedules::MeshProgram> program;
    CheckedSchedule checked = build(algorithm, problem, options, key, shared, program);
    // The grid fills its pair counts on first use (a mutable table); fill them all now, while
    // this thread alone holds the schedule, so that the threads sharing it only read.
    checked.grid().total_pairs();
    promise.set_value(checked);
    std::lock_guard<std::mutex> lock(mutex_);
    if (shared) ++stats_.shared_checks;
    else if (program) {
      building->mesh_program = std::move(program);
      programs_[batchless(key)].push_back(building);
    }
    account(key, held_bytes(checked));
    return checked;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mutex_);
    account(key, kFailureBytes);
    throw;
  }
}

CheckedSchedule ScheduleCache::build(const std::string& algorithm, const Problem& problem, const GeneratorOptions& options,
                                    const ScheduleKey& key, bool& shared,
                                    std::shared_ptr<const schedules::MeshProgram>& program) {
  // Of the generators that read the batch, Mesh's alone is cached (cacheable): the others
  // read files.
  if (algorithm != "mesh") return schedules::generate_checked(algorithm, problem, options);
  // Its plan decides its ops (mesh_plan.hpp): an equal plan held for another batch gives the same
  // program, whose check and analysis are shared without emitting the ops again.
  schedules::PlannedMesh planned = schedules::plan_mesh_unemitted(problem, options);
  for (const auto& [held, held_program] : held_programs(batchless(key)))
    if (*held_program == planned.program) {
      shared = true;
      return schedules::with_batch(held, problem.batch);
    }
  program = std::make_shared<const schedules::MeshProgram>(planned.program);
  return schedules::check_generated(schedules::emit_planned_mesh(std::move(planned), problem, options), algorithm, options);
}

std::vector<std::pair<CheckedSchedule, std::shared_ptr<const schedules::MeshProgram>>> ScheduleCache::held_programs(
    const ScheduleKey& batchless_key) {
  std::vector<std::pair<CheckedSchedule, std::shared_ptr<const schedules::MeshProgram>>> held;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = programs_.find(batchless_key);
  if (found == programs_.end()) return held;
  auto& entries = found->second;
  std::erase_if(entries, [](const std::weak_ptr<Entry>& weak) { return weak.expired(); });
  for (const auto& weak : entries)
    if (auto entry = weak.lock(); entry && entry->ready)
      held.emplace_back(entry->result.get(), entry->mesh_program);  // built: no wait
  if (entries.empty()) programs_.erase(found);
  return held;
}

void ScheduleCache::account(const ScheduleKey& key, size_t bytes) {
  // Entries being built are never evicted, so the key is still there.
  const auto held = entries_.find(key);
  Entry& built = *held->second;
  if (bytes > max_bytes_) {
    // Larger than the whole bound: not held, and the others stay.
    recency_.erase(built.position);
    entries_.erase(held);
    ++stats_.evictions;
    return;
  }
  built.bytes = bytes;
  built.ready = true;
  stats_.bytes += bytes;
  // The least recently used ready entries go first.
  auto position = recency_.end();
  while (stats_.bytes > max_bytes_ && position != recency_.begin()) {
    --position;
    auto found = entries_.find(*position);
    if (!found->second->ready) continue;
    stats_.bytes -= found->second->bytes;
    ++stats_.evictions;
    entries_.erase(found);
    position = recency_.erase(position);
  }
}

}  // namespace tessera::scenario
