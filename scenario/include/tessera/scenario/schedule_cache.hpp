#pragma once
// Checked schedules shared between evaluations that differ only in what a schedule does not
// depend on: a sweep prices one schedule at many network and hardware points, and generating
// and checking it (its dependency analysis included) costs as much as pricing it.
//
// The key is every input of schedules::generate_checked: the algorithm, the whole problem and
// every generator option, the planner's hardware (PlanHardware) for Mesh only, the one
// generator that reads it. So a Mesh planned for another bandwidth is another entry; a Ring
// is one entry for every bandwidth. The batch is left out of the key of every algorithm whose
// generator does not read it (schedules::generator_reads_batch: all but Mesh): one entry serves
// every batch size, handed out through schedules::with_batch. Mesh is keyed by the batch, but
// its plan seldom changes with it (compute grows with the batch, a hop's latency does not, and
// the order flips only near where they cross): a Mesh planned for a batch whose plan equals the
// plan of one held for another batch (schedules::MeshProgram, which alone decides its ops) shares
// that one's ops, check and analysis (with_batch) instead of emitting and checking again.
// Schedules read from a file
// (algorithms "file" and "assignment") are never held: the file is an input the key cannot see.
//
// Thread-safe, one build per key: a thread asking for a key another thread is building waits
// for that build instead of repeating it. A build's failure (UserError: the schedule does not
// apply) is held like a schedule and rethrown to every caller, as the build would throw it.
// Bounded by an estimate of the bytes the held schedules take (schedule, block grid and
// analysis); past the bound the least recently used go first. A schedule larger than the whole
// bound is returned and not held.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/mesh_plan.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::scenario {

// The fields a generated schedule depends on, flattened so that keys compare exactly (doubles
// by their bits). A field added to Problem or GeneratorOptions must be added here.
struct ScheduleKey {
  std::string algorithm;
  // The problem.
  int64_t batch = 0, seq_len = 0, heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  int dtype = 0, mask = 0, pass = 0;
  int64_t window_tokens = 0;
  std::vector<int64_t> document_lengths;
  // The generator options.
  int32_t gpus = 0;
  int layout = -1;                     // -1: the default layout
  int32_t tile_first = 0, tile_second = 0;  // 0 x 0: the default tile
  std::string variant;
  int32_t buffers = 0;
  bool by_rotation = false;            // ring, mesh, usp: a period's programs alone where the generator can
  int32_t rotation_period = 0;         // with by_rotation: the period asked for (0: the schedule's own)
  std::vector<uint64_t> plan_hardware_bits;  // Mesh only: PlanHardware's five figures, bit for bit
  bool has_mesh_hops = false;
  std::string forward_hops, backward_hops;
  friend auto operator<=>(const ScheduleKey&, const ScheduleKey&) = default;
};

ScheduleKey schedule_key(const std::string& algorithm, const Problem& problem,
                         const schedules::GeneratorOptions& options);

// Whether schedules of this algorithm are held (not those read from a file).
bool cacheable(const std::string& algorithm);

// An estimate of the bytes a checked schedule holds: its ops, blocks, items, collectives, the
// block grid's per-chunk tables and the analysis arrays (capacities, not sizes).
size_t held_bytes(const schedules::CheckedSchedule& checked);

class ScheduleCache {
 public:
  static constexpr size_t kDefaultBytes = size_t{512} << 20;  // 512 MiB

  explicit ScheduleCache(size_t max_bytes = kDefaultBytes);
  ScheduleCache(const ScheduleCache&) = delete;
  ScheduleCache& operator=(const ScheduleCache&) = delete;
  ~ScheduleCache();

  // schedules::generate_checked(algorithm, problem, options): the held schedule when there is
  // one, else built now (by this thread, or by the one already building it) and held.
  schedules::CheckedSchedule generate_checked(const std::string& algorithm, const Problem& problem,
                                              const schedules::GeneratorOptions& options);

  struct Stats {
    size_t hits = 0;       // calls answered by a held (or building) entry
    size_t misses = 0;     // calls that built
    // Builds whose program equalled one still held, not checked again: one for another batch,
    // or (under eviction) the same batch's, evicted while a point still used it.
    size_t shared_checks = 0;
    size_t evictions = 0;  // entries dropped for the bound
    size_t entries = 0;    // held now
    size_t bytes = 0;      // their estimated bytes
  };
  Stats stats() const;
  size_t max_bytes() const { return max_bytes_; }

 private:
  struct Entry;
  // Generates and checks, or for Mesh, whose planner reads the batch, shares the check of the
  // program held for another batch whose plan is equal (setting `shared`); a Mesh emitted here
  // hands back its plan in `program`.
  schedules::CheckedSchedule build(const std::string& algorithm, const Problem& problem,
                                   const schedules::GeneratorOptions& options, const ScheduleKey& key, bool& shared,
                                   std::shared_ptr<const schedules::MeshProgram>& program);
  // The held programs of a batchless key, each with its plan.
  std::vector<std::pair<schedules::CheckedSchedule, std::shared_ptr<const schedules::MeshProgram>>> held_programs(
      const ScheduleKey& batchless);
  void account(const ScheduleKey& key, size_t bytes);  // with mutex_ held
  size_t max_bytes_;
  mutable std::mutex mutex_;
  std::list<ScheduleKey> recency_;  // most recently used first
  std::map<ScheduleKey, std::shared_ptr<Entry>> entries_;
  // Per key without the batch (generators that read it): the held entries of its distinct
  // programs, each checked once. Evicted entries expire here and are dropped when next read.
  std::map<ScheduleKey, std::vector<std::weak_ptr<Entry>>> programs_;
  Stats stats_;
};

}  // namespace tessera::scenario
