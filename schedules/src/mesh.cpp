// Mesh-Attention: P = a x b GPUs, each computing an a x b tile of the block grid.
// GPU g = R*a + C (R in [0,b), C in [0,a)) takes the query chunks of its Q-ring
// {R*a + c} and the key/value chunks {C + r*a} of its KV-ring {r*a + C}. That is the
// "rotated" assignment: the tile always holds the GPU's own block (g, g), both rings are
// formed by the owners of the chunks they carry, and every transfer is point to point.
// Q (backward: Q, dO, Stats) circulates around the Q-ring of size a and KV around the
// KV-ring of size b, in the order of the greedy plan (mesh_plan.hpp); each partial output
// (forward: O and LSE; backward: dQ by rows and dK/dV by columns) travels along its ring,
// collecting one contribution per GPU, and reaches its owner after a - 1 (b - 1) hops. So the
// 1 x P tile is Ring-Attention pass-KV and the P x 1 tile Ring pass-Q (ring_emitter.hpp).
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/mesh_plan.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

namespace {

int32_t wrap(int64_t value, int32_t size) { return static_cast<int32_t>(((value % size) + size) % size); }

// Bytes one GPU moves per pass for an a x b tile (what the tile shape trades off).
double tile_bytes(const Problem& problem, int32_t gpus, int32_t a, int32_t b) {
  const int64_t tokens = std::max<int64_t>(1, problem.seq_len / gpus);
  auto bytes = [&](DataKind kind) { return static_cast<double>(item_bytes(problem, 1, tokens, kind)); };
  double total = 0;
  if (problem.has_forward())
    total += (a - 1) * (bytes(DataKind::Q) + bytes(DataKind::O) + bytes(DataKind::LSE)) + (b - 1) * bytes(DataKind::KV);
  if (problem.has_backward())
    total += (a - 1) * (bytes(DataKind::Q) + bytes(DataKind::dO) + bytes(DataKind::Stats) + bytes(DataKind::dQ)) +
             (b - 1) * (bytes(DataKind::KV) + bytes(DataKind::dKV));
  return total;
}

struct MeshGeometry {
  int32_t a, b;
  int32_t row_of(int32_t gpu) const { return gpu / a; }      // R: which Q-ring
  int32_t column_of(int32_t gpu) const { return gpu % a; }   // C: which KV-ring
  // Chunk of relative row s / column t of GPU g (s, t hops back along the ring).
  int32_t q_chunk(int32_t gpu, int32_t s) const { return row_of(gpu) * a + wrap(column_of(gpu) - s, a); }
  int32_t kv_chunk(int32_t gpu, int32_t t) const { return wrap(row_of(gpu) - t, b) * a + column_of(gpu); }
  int32_t q_next(int32_t gpu) const { return row_of(gpu) * a + wrap(column_of(gpu) + 1, a); }
  int32_t q_previous(int32_t gpu) const { return row_of(gpu) * a + wrap(column_of(gpu) - 1, a); }
  int32_t kv_next(int32_t gpu) const { return wrap(row_of(gpu) + 1, b) * a + column_of(gpu); }
  int32_t kv_previous(int32_t gpu) const { return wrap(row_of(gpu) - 1, b) * a + column_of(gpu); }
  // The GPU whose relative row s (column t) is GPU g's own chunk.
  int32_t q_holder(int32_t gpu, int32_t s) const { return row_of(gpu) * a + wrap(column_of(gpu) + s, a); }
  int32_t kv_holder(int32_t gpu, int32_t t) const { return wrap(row_of(gpu) + t, b) * a + column_of(gpu); }
};

class MeshEmitter {
 public:
  // The Q-ring and the KV-ring receive on streams of their own, with the buffers given.
  MeshEmitter(ScheduleBuilder& builder, const BlockGrid& grid, MeshGeometry geometry, int32_t q_buffers,
              int32_t kv_buffers)
      : builder_(builder), grid_(grid), mesh_(geometry) {
    compute_ = builder.stream("compute");
    ring_send_ = builder.stream("ring_send");
    q_recv_ = builder.stream("q_recv", q_buffers);
    kv_recv_ = builder.stream("kv_recv", kv_buffers);
    out_send_ = builder.stream("out_send");
    out_recv_ = builder.stream("out_recv");
  }

  void emit(int32_t gpu, Pass pass, const std::vector<MeshPhase>& phases) {
    const bool backward = pass == Pass::backward;
    int32_t q_steps = 0, kv_steps = 0;
    Chain rows(mesh_.a), columns(mesh_.b);
    for (const auto& phase : phases) {
      if (phase.step == MeshPhase::Step::q) {
        ++q_steps;
        send_ring(gpu, mesh_.q_next(gpu), q_items(mesh_.q_chunk(gpu, q_steps - 1), backward));
        builder_.recv(gpu, q_recv_, mesh_.q_previous(gpu), q_items(mesh_.q_chunk(gpu, q_steps), backward));
      } else if (phase.step == MeshPhase::Step::kv) {
        ++kv_steps;
        send_ring(gpu, mesh_.kv_next(gpu), {DataItem{DataKind::KV, 0, mesh_.kv_chunk(gpu, kv_steps - 1)}});
        builder_.recv(gpu, kv_recv_, mesh_.kv_previous(gpu), {DataItem{DataKind::KV, 0, mesh_.kv_chunk(gpu, kv_steps)}});
      }
      for (const auto& item : phase.blocks) {
        const int32_t q = mesh_.q_chunk(gpu, item.row), kv = mesh_.kv_chunk(gpu, item.column);
        if (grid_.has_work(q, kv)) pending_.push_back(BlockRef{0, q, kv});
        if (item.completes_row) {
          flush(gpu, pass);
          rows.done[static_cast<size_t>(item.row)] = true;
          while (rows.next_link < mesh_.a && rows.done[static_cast<size_t>(rows.next_link)])
            row_link(gpu, backward, rows.next_link++);
        }
        if (item.completes_column) {
          flush(gpu, pass);
          columns.done[static_cast<size_t>(item.column)] = true;
          while (columns.next_link < mesh_.b && columns.done[static_cast<size_t>(columns.next_link)])
            column_link(gpu, columns.next_link++);
        }
      }
      flush(gpu, pass);
    }
    // The partials of the GPU's own chunks come home after their last hop, to be merged with
    // the contribution it kept.
    if (mesh_.a > 1 && row_alive(gpu, mesh_.a - 1)) builder_.merge(gpu, compute_, row_partial(gpu, backward));
    if (backward && mesh_.b > 1 && column_alive(gpu, mesh_.b - 1))
      builder_.merge(gpu, compute_, {DataItem{DataKind::dKV, 0, gpu}});
  }

 private:
  // Partial outputs travel along the rings, as every Mesh-Attention transfer does, and as
  // Ring-Attention's do (ring_emitter.hpp): the partial of a query chunk starts at the GPU that
  // holds it one hop after its owner, collects one contribution per GPU of the Q-ring and
  // reaches the owner after a - 1 hops (dK/dV: the KV-ring, b - 1 hops). A GPU passes the
  // partial of relative row r on once it has completed row r and merged what came from the
  // previous GPU, which passed on its row r - 1 at the same point of the same plan; so link r
  // comes after link r - 1 and after row r completes. Partials that are still empty (every
  // block so far masked) do not travel.
  struct Chain {
    explicit Chain(int32_t size) : done(static_cast<size_t>(size), false) {}
    std::vector<bool> done;
    int32_t next_link = 1;
  };
  static std::vector<DataItem> row_partial(int32_t chunk, bool backward) {
    if (backward) return {DataItem{DataKind::dQ, 0, chunk}};
    return {DataItem{DataKind::O, 0, chunk}, DataItem{DataKind::LSE, 0, chunk}};
  }
  // Does the partial of query chunk q hold a contribution once its holder at relative row
  // `row` (1 .. a - 1) has added its own? Likewise for key/value chunk kv along the KV-ring.
  bool row_alive(int32_t q, int32_t row) const {
    for (int32_t hops = 1; hops <= row; ++hops)
      if (tile_has_row_work(mesh_.q_holder(q, hops), q)) return true;
    return false;
  }
  bool column_alive(int32_t kv, int32_t column) const {
    for (int32_t hops = 1; hops <= column; ++hops)
      if (tile_has_column_work(mesh_.kv_holder(kv, hops), kv)) return true;
    return false;
  }
  // Link r of the Q-ring chain: fold in the partial of row r (posted at link r - 1), pass it
  // on, and post the receive of the partial of row r + 1 (after the last row: the GPU's own).
  void row_link(int32_t gpu, bool backward, int32_t row) {
    const int32_t q = mesh_.q_chunk(gpu, row);
    if (row >= 2 && row_alive(q, row - 1)) builder_.merge(gpu, compute_, row_partial(q, backward));
    if (row_alive(q, row)) builder_.send(gpu, out_send_, mesh_.q_next(gpu), row_partial(q, backward));
    const int32_t following = row + 1 < mesh_.a ? mesh_.q_chunk(gpu, row + 1) : gpu;
    if (row_alive(following, row)) builder_.recv(gpu, out_recv_, mesh_.q_previous(gpu), row_partial(following, backward));
  }
  void column_link(int32_t gpu, int32_t column) {
    const int32_t kv = mesh_.kv_chunk(gpu, column);
    if (column >= 2 && column_alive(kv, column - 1)) builder_.merge(gpu, compute_, {DataItem{DataKind::dKV, 0, kv}});
    if (column_alive(kv, column)) builder_.send(gpu, out_send_, mesh_.kv_next(gpu), {DataItem{DataKind::dKV, 0, kv}});
    const int32_t following = column + 1 < mesh_.b ? mesh_.kv_chunk(gpu, column + 1) : gpu;
    if (column_alive(following, column))
      builder_.recv(gpu, out_recv_, mesh_.kv_previous(gpu), {DataItem{DataKind::dKV, 0, following}});
  }

  static std::vector<DataItem> q_items(int32_t chunk, bool backward) {
    if (!backward) return {DataItem{DataKind::Q, 0, chunk}};
    return {DataItem{DataKind::Q, 0, chunk}, DataItem{DataKind::dO, 0, chunk}, DataItem{DataKind::Stats, 0, chunk}};
  }
  void send_ring(int32_t gpu, int32_t to, std::vector<DataItem> items) { builder_.send(gpu, ring_send_, to, items); }
  void flush(int32_t gpu, Pass pass) {
    builder_.compute(gpu, pass, pending_, compute_);
    pending_.clear();
  }
  // Does GPU g's tile hold any block with work in query chunk q (key/value chunk kv)?
  bool tile_has_row_work(int32_t gpu, int32_t q) const {
    for (int32_t t = 0; t < mesh_.b; ++t)
      if (grid_.has_work(q, mesh_.kv_chunk(gpu, t))) return true;
    return false;
  }
  bool tile_has_column_work(int32_t gpu, int32_t kv) const {
    for (int32_t s = 0; s < mesh_.a; ++s)
      if (grid_.has_work(mesh_.q_chunk(gpu, s), kv)) return true;
    return false;
  }

  ScheduleBuilder& builder_;
  const BlockGrid& grid_;
  MeshGeometry mesh_;
  int32_t compute_, ring_send_, q_recv_, kv_recv_, out_send_, out_recv_;
  std::vector<BlockRef> pending_;
};

// The buffers a ring's receive stream needs so that the plan never waits on itself: the most
// chunks of that ring live when one arrives, counting it. Chunk k (relative row or column k)
// arrives with the ring's k-th step, is read by the blocks of its row (column) and is passed
// on with step k + 1. A chunk passed on in the phase where the next arrives still counts:
// passing on is a rendezvous with a neighbour that is itself waiting for a buffer. The plan is
// the same on every GPU; masked blocks only free buffers sooner, so this bound is safe.
int32_t buffers_needed(const std::vector<MeshPhase>& phases, MeshPhase::Step ring, int32_t ring_size) {
  std::vector<size_t> arrival(static_cast<size_t>(ring_size), 0), last_use(static_cast<size_t>(ring_size), 0);
  int32_t steps = 0;
  for (size_t phase = 0; phase < phases.size(); ++phase) {
    if (phases[phase].step == ring) {
      ++steps;
      arrival[static_cast<size_t>(steps)] = phase;
      last_use[static_cast<size_t>(steps - 1)] = std::max(last_use[static_cast<size_t>(steps - 1)], phase);
    }
    for (const auto& item : phases[phase].blocks) {
      const auto index = static_cast<size_t>(ring == MeshPhase::Step::q ? item.row : item.column);
      last_use[index] = std::max(last_use[index], phase);
    }
  }
  int32_t needed = 0;
  for (int32_t k = 1; k <= steps; ++k) {
    int32_t live = 1;
    for (int32_t j = 1; j < k; ++j)
      if (last_use[static_cast<size_t>(j)] >= arrival[static_cast<size_t>(k)]) ++live;
    needed = std::max(needed, live);
  }
  return needed;
}

}  // namespace

// One hop of each ring on the hardware the tile runs on (its fixed cost plus bytes over the
// ring's narrowest link), and one block's compute. A block
// costs its mask-exact work: the mean over every block of the grid, which is also the mean
// over the GPUs of each relative block the SPMD plan places (causal: about half of N^2/n^2;
// a fully masked block counts as the zero it costs).
MeshCosts mesh_plan_costs(const Problem& problem, const BlockGrid& grid, bool backward, const PlanHardware& hardware) {
  const int64_t gpus = grid.chunks();
  const int64_t tokens = std::max<int64_t>(1, problem.seq_len / gpus);
  auto bytes = [&](DataKind kind) { return static_cast<double>(item_bytes(problem, 1, tokens, kind)); };
  const double pairs_per_block = static_cast<double>(grid.total_pairs()) / static_cast<double>(gpus * gpus);
  const double heads = static_cast<double>(problem.heads * problem.batch);
  const double q_bytes = backward ? bytes(DataKind::Q) + bytes(DataKind::dO) + bytes(DataKind::Stats) : bytes(DataKind::Q);
  const double flops = heads * (backward ? backward_flops_per_head(problem, pairs_per_block)
                                         : forward_flops_per_head(problem, pairs_per_block));
  MeshCosts costs;
  costs.q_step_s = hardware.q_ring_latency_s + q_bytes / hardware.q_ring_bytes_per_s;
  costs.kv_step_s = hardware.kv_ring_latency_s + bytes(DataKind::KV) / hardware.kv_ring_bytes_per_s;
  costs.block_s = flops / hardware.flops_per_s;
  return costs;
}

TileShape choose_mesh_tile(const Problem& problem, int32_t gpus) {
  TileShape best{1, gpus};
  double best_bytes = std::numeric_limits<double>::infinity();
  for (const TileShape& tile : factor_pairs(gpus)) {
    double bytes = tile_bytes(problem, gpus, tile.first, tile.second);
    // Ties go to the squarer tile (shorter rings, fewer dependent steps).
    if (bytes < best_bytes * (1 - 1e-12) ||
        (bytes <= best_bytes * (1 + 1e-12) &&
         std::abs(tile.first - tile.second) < std::abs(best.first - best.second))) {
      best = tile;
      best_bytes = bytes;
    }
  }
  return best;
}

MeshProgram plan_mesh_program(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  MeshProgram program;
  TileShape& tile = program.tile;
  tile = options.tile.value_or(choose_mesh_tile(problem, gpus));
  if (static_cast<int64_t>(tile.first) * tile.second != gpus)
    throw UserError("--tile: mesh tile " + to_string(tile) + " covers " + std::to_string(int64_t{tile.first} * tile.second) +
                    " GPUs, not " + std::to_string(gpus) + ": a x b must equal --gpus");
  // Variant "optimal": the hop orders a search chose (scenario/mesh_search.hpp), planned as given.
  const bool optimal = options.variant == "optimal";
  if (optimal && !options.mesh_hops)
    throw UserError("mesh variant 'optimal' is found by simulating every hop order: it is generated through the "
                    "scenario layer (tessera schedule, cost, simulate, sweep), which searches the orders");
  if (!optimal && options.mesh_hops) throw UserError("mesh hop orders are planned for variant 'optimal' only");
  const MeshOrder order = optimal ? MeshOrder::explicit_order : parse_mesh_order(options.variant);
  std::string& variant = program.variant;
  variant = to_string(tile) + " " + to_string(grid.layout());
  if (optimal) {
    // The orders planned, forward then backward ('-' for a pass without hops).
    std::string orders;
    for (Pass pass : {Pass::forward, Pass::backward}) {
      if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
      const std::string& hops = pass == Pass::forward ? options.mesh_hops->forward : options.mesh_hops->backward;
      orders += (orders.empty() ? "" : "/") + (hops.empty() ? std::string("-") : hops);
    }
    variant += " optimal " + orders;
  } else if (order != MeshOrder::greedy) {
    variant += " " + to_string(order);
  }
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    const bool backward = pass == Pass::backward;
    const std::string hops = optimal ? (backward ? options.mesh_hops->backward : options.mesh_hops->forward) : "";
    std::vector<MeshPhase> phases;
    try {
      phases = plan_mesh_tile(tile.first, tile.second, mesh_plan_costs(problem, grid, backward, options.plan_hardware),
                              backward, order, hops);
    } catch (const std::invalid_argument& error) {
      throw UserError(std::string(error.what()) + " (tile " + to_string(tile) + ")");
    }
    program.plans.emplace_back(pass, std::move(phases));
  }
  // Mesh caches the chunks its plan still needs (a tile's worth at most, as the paper says);
  // beyond that, its rings run ahead no further than every other schedule's (--buffers).
  if (options.buffers > 0) {
    program.q_buffers = program.kv_buffers = options.buffers;
    for (const auto& [pass, phases] : program.plans) {
      program.q_buffers = std::max(program.q_buffers, buffers_needed(phases, MeshPhase::Step::q, tile.first));
      program.kv_buffers = std::max(program.kv_buffers, buffers_needed(phases, MeshPhase::Step::kv, tile.second));
    }
  }
  return program;
}

int32_t mesh_rotation_period(const TileShape& tile) {
  // Shifting every GPU and chunk by a moves each GPU one row on (its Q-ring's chunks by a, its
  // KV-ring's too) and keeps its column: every row runs the first row's program shifted. With
  // one row (b = 1) the Q-ring is every GPU, and a shift by 1 is the ring's own.
  return tile.second == 1 ? 1 : tile.first;
}

Schedule emit_mesh_program(const MeshProgram& program, const Problem& problem, const BlockGrid& grid, int32_t gpus,
                           bool by_rotation, int32_t rotation_period) {
  ScheduleBuilder builder("mesh", program.variant, problem, grid.layout(), gpus);
  MeshEmitter emitter(builder, grid, MeshGeometry{program.tile.first, program.tile.second}, program.q_buffers,
                      program.kv_buffers);
  const int32_t own_period = mesh_rotation_period(program.tile);
  const int32_t period = held_period(own_period, rotation_period, gpus);
  const bool rotation = by_rotation && period < gpus && grid_is_rotation_invariant(grid, own_period);
  if (by_rotation && !rotation) {
    // Estimated as one row's programs before the grid was known: every GPU's must fit too.
    GeneratorOptions full;
    full.gpus = gpus;
    full.tile = program.tile;
    require_schedule_memory("mesh", problem, full);
  }
  if (rotation) builder.set_form(ProgramForm::rotation, period);
  for (const auto& [pass, phases] : program.plans) {
    builder.set_pass(pass);
    for (int32_t gpu = 0; gpu < (rotation ? period : gpus); ++gpu) emitter.emit(gpu, pass, phases);
  }
  Schedule schedule = builder.finish();
  schedule.tile = program.tile;
  return schedule;
}

Schedule generate_mesh(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  return emit_mesh_program(plan_mesh_program(problem, options, grid), problem, grid, options.gpus, options.by_rotation,
                           options.rotation_period);
}

}  // namespace tessera::schedules
