// Mesh-Attention: P = a x b GPUs, each computing an a x b tile of the block grid.
// GPU g = R*a + C (R in [0,b), C in [0,a)) takes the query chunks of its Q-ring
// {R*a + c} and the key/value chunks {C + r*a} of its KV-ring {r*a + C}. That is the
// "rotated" assignment: the tile always holds the GPU's own block (g, g), both rings are
// formed by the owners of the chunks they carry, and every transfer is point to point.
// Q (backward: Q, dO, Stats) circulates around the Q-ring of size a and KV around the
// KV-ring of size b, in the order of the greedy plan (mesh_plan.hpp); each partial output
// (forward: O and LSE; backward: dQ by rows and dK/dV by columns) goes straight to its
// owner as soon as the plan completes it, and owners merge at the end.
#include <cmath>
#include <limits>

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/costmodel/generators.hpp"
#include "tessera/costmodel/mesh_plan.hpp"

namespace tessera {

namespace {

int32_t wrap(int64_t value, int32_t size) { return static_cast<int32_t>(((value % size) + size) % size); }

// Reference hardware used only to weigh transfers against compute inside the plan
// (H100-class: ~60 % of 989 TFLOP/s dense bf16; 400 Gb/s InfiniBand per GPU).
constexpr double kPlanFlopsPerS = 0.6 * 989e12;
constexpr double kPlanBytesPerS = 50e9;

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

MeshCosts plan_costs(const Problem& problem, const BlockGrid& grid, bool backward) {
  const int64_t gpus = grid.chunks();
  const int64_t tokens = std::max<int64_t>(1, problem.seq_len / gpus);
  auto bytes = [&](DataKind kind) { return static_cast<double>(item_bytes(problem, 1, tokens, kind)); };
  const double pairs_per_block = static_cast<double>(problem.seq_len) * static_cast<double>(problem.seq_len) /
                                 static_cast<double>(gpus * gpus);
  const double heads = static_cast<double>(problem.heads * problem.batch);
  MeshCosts costs;
  if (backward) {
    costs.q_step_s = (bytes(DataKind::Q) + bytes(DataKind::dO) + bytes(DataKind::Stats)) / kPlanBytesPerS;
    costs.block_s = heads * backward_flops_per_head(problem, pairs_per_block) / kPlanFlopsPerS;
  } else {
    costs.q_step_s = bytes(DataKind::Q) / kPlanBytesPerS;
    costs.block_s = heads * forward_flops_per_head(problem, pairs_per_block) / kPlanFlopsPerS;
  }
  costs.kv_step_s = bytes(DataKind::KV) / kPlanBytesPerS;
  return costs;
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
  MeshEmitter(ScheduleBuilder& builder, const BlockGrid& grid, MeshGeometry geometry)
      : builder_(builder), grid_(grid), mesh_(geometry) {
    compute_ = builder.stream("compute");
    ring_send_ = builder.stream("ring_send");
    ring_recv_ = builder.stream("ring_recv");
    out_send_ = builder.stream("out_send");
    out_recv_ = builder.stream("out_recv");
  }

  void emit(int32_t gpu, Pass pass, const std::vector<MeshPhase>& phases) {
    const bool backward = pass == Pass::backward;
    int32_t q_steps = 0, kv_steps = 0;
    bool expects_q_partials = false, expects_kv_partials = false;
    for (const auto& phase : phases) {
      if (phase.step == MeshPhase::Step::q) {
        ++q_steps;
        send_ring(gpu, mesh_.q_next(gpu), q_items(mesh_.q_chunk(gpu, q_steps - 1), backward));
        recv_ring(gpu, mesh_.q_previous(gpu), q_items(mesh_.q_chunk(gpu, q_steps), backward));
      } else if (phase.step == MeshPhase::Step::kv) {
        ++kv_steps;
        send_ring(gpu, mesh_.kv_next(gpu), {DataItem{DataKind::KV, 0, mesh_.kv_chunk(gpu, kv_steps - 1)}});
        recv_ring(gpu, mesh_.kv_previous(gpu), {DataItem{DataKind::KV, 0, mesh_.kv_chunk(gpu, kv_steps)}});
      }
      for (const auto& item : phase.blocks) {
        const int32_t q = mesh_.q_chunk(gpu, item.row), kv = mesh_.kv_chunk(gpu, item.column);
        if (grid_.has_work(q, kv)) pending_.push_back(BlockRef{0, q, kv});
        if (item.completes_row) {
          flush(gpu, pass);
          // Our partial of row `item.row` goes to its owner; the GPU holding our own row at
          // the same relative place sends us its partial at the same point of its program.
          const int32_t owner = mesh_.q_holder(gpu, -item.row);
          std::vector<DataItem> outgoing = backward ? std::vector<DataItem>{{DataKind::dQ, 0, q}}
                                                    : std::vector<DataItem>{{DataKind::O, 0, q}, {DataKind::LSE, 0, q}};
          if (tile_has_row_work(gpu, q)) builder_.send(gpu, out_send_, owner, outgoing);
          const int32_t sender = mesh_.q_holder(gpu, item.row);
          if (tile_has_row_work(sender, gpu)) {
            for (auto& entry : outgoing) entry.chunk = gpu;
            builder_.recv(gpu, out_recv_, sender, outgoing);
            expects_q_partials = true;
          }
        }
        if (item.completes_column) {
          flush(gpu, pass);
          const int32_t owner = mesh_.kv_holder(gpu, -item.column);
          if (tile_has_column_work(gpu, kv)) builder_.send(gpu, out_send_, owner, {DataItem{DataKind::dKV, 0, kv}});
          const int32_t sender = mesh_.kv_holder(gpu, item.column);
          if (tile_has_column_work(sender, gpu)) {
            builder_.recv(gpu, out_recv_, sender, {DataItem{DataKind::dKV, 0, gpu}});
            expects_kv_partials = true;
          }
        }
      }
      flush(gpu, pass);
    }
    if (expects_q_partials) {
      if (backward) {
        builder_.merge(gpu, compute_, {DataItem{DataKind::dQ, 0, gpu}});
      } else {
        builder_.merge(gpu, compute_, {DataItem{DataKind::O, 0, gpu}, DataItem{DataKind::LSE, 0, gpu}});
      }
    }
    if (expects_kv_partials) builder_.merge(gpu, compute_, {DataItem{DataKind::dKV, 0, gpu}});
  }

 private:
  static std::vector<DataItem> q_items(int32_t chunk, bool backward) {
    if (!backward) return {DataItem{DataKind::Q, 0, chunk}};
    return {DataItem{DataKind::Q, 0, chunk}, DataItem{DataKind::dO, 0, chunk}, DataItem{DataKind::Stats, 0, chunk}};
  }
  void send_ring(int32_t gpu, int32_t to, std::vector<DataItem> items) { builder_.send(gpu, ring_send_, to, items); }
  void recv_ring(int32_t gpu, int32_t from, std::vector<DataItem> items) { builder_.recv(gpu, ring_recv_, from, items); }
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
  int32_t compute_, ring_send_, ring_recv_, out_send_, out_recv_;
  std::vector<BlockRef> pending_;
};

}  // namespace

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

Schedule generate_mesh(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  TileShape tile = options.tile.value_or(choose_mesh_tile(problem, gpus));
  if (static_cast<int64_t>(tile.first) * tile.second != gpus)
    throw UserError("mesh tile " + to_string(tile) + " covers " + std::to_string(int64_t{tile.first} * tile.second) +
                    " GPUs, not " + std::to_string(gpus) + ": a x b must equal --gpus");
  const MeshOrder order = parse_mesh_order(options.variant);
  std::string variant = to_string(tile) + " " + to_string(grid.layout());
  if (order != MeshOrder::greedy) variant += " " + to_string(order);
  ScheduleBuilder builder("mesh", variant, problem, grid.layout(), gpus);
  MeshEmitter emitter(builder, grid, MeshGeometry{tile.first, tile.second});
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    builder.set_pass(pass);
    const bool backward = pass == Pass::backward;
    auto phases = plan_mesh_tile(tile.first, tile.second, plan_costs(problem, grid, backward), backward, order);
    for (int32_t gpu = 0; gpu < gpus; ++gpu) emitter.emit(gpu, pass, phases);
  }
  return builder.finish();
}

}  // namespace tessera
