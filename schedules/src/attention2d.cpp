// ATTENTION2D (Elango, arXiv 2503.15758): P = rows x cols GPUs in a grid; GPU (r, c) computes
// query band r against key/value band c. Query band r is the chunks owned by row r's GPUs, so
// Q only moves along the row; key/value band c is the contiguous run of chunks
// {c*rows .. c*rows + rows - 1}, which is why the paper first permutes ("transposes") K/V:
// chunk c*rows + r goes to GPU (r, c), and the column then gathers its band.
//  - collective (ATTENTION2D-NO): permute K/V; all-gather Q in the row; all-gather K/V in the
//    column; compute; reduce-scatter the partial outputs to their owners in the row. Backward:
//    the same gathers (with dO and Stats), then dQ reduce-scattered in the row, dK/dV reduce-
//    scattered in the column and permuted back to their owners.
//  - ring (ATTENTION2D-O): the same assignment with point-to-point rings that overlap compute:
//    Q circulates the row, then K/V the column; partials go straight to their owners, the k-th
//    to the owner k places on (and the k-th received from the GPU k places back), as an
//    all-to-all pairs its peers: each round is a permutation, so no owner waits for every
//    sender at once. On one row (1 x P) or one column (P x 1) every GPU's program is GPU 0's
//    shifted, and it is held by rotation where asked (rotation.hpp).
#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/resource_estimate.hpp"
#include "tessera/schedules/rotation.hpp"

namespace tessera::schedules {

namespace {

struct Grid2d {
  int32_t rows, cols;
  int32_t gpu(int32_t r, int32_t c) const { return r * cols + c; }
  int32_t row_of(int32_t gpu) const { return gpu / cols; }
  int32_t col_of(int32_t gpu) const { return gpu % cols; }
  // KV chunk GPU (r, c) holds after the permutation, and where a KV chunk goes.
  int32_t held_kv(int32_t gpu) const { return col_of(gpu) * rows + row_of(gpu); }
  int32_t holder_of_kv(int32_t chunk) const { return gpu(chunk % rows, chunk / rows); }
  std::vector<int32_t> q_band(int32_t r) const {
    std::vector<int32_t> band;
    for (int32_t c = 0; c < cols; ++c) band.push_back(gpu(r, c));
    return band;
  }
  std::vector<int32_t> kv_band(int32_t c) const {
    std::vector<int32_t> band;
    for (int32_t r = 0; r < rows; ++r) band.push_back(c * rows + r);
    return band;
  }
  std::vector<int32_t> row_members(int32_t r) const { return q_band(r); }  // row r's GPUs own band r
  std::vector<int32_t> col_members(int32_t c) const {
    std::vector<int32_t> members;
    for (int32_t r = 0; r < rows; ++r) members.push_back(gpu(r, c));
    return members;
  }
};

TileShape default_grid(int32_t gpus) {
  TileShape best{1, gpus};
  for (const TileShape& shape : factor_pairs(gpus))
    if (shape.first <= shape.second) best = shape;  // the most square with rows <= cols
  return best;
}

std::vector<DataItem> q_side(int32_t chunk, bool backward) {
  if (!backward) return {DataItem{DataKind::Q, 0, chunk}};
  return {DataItem{DataKind::Q, 0, chunk}, DataItem{DataKind::dO, 0, chunk}, DataItem{DataKind::Stats, 0, chunk}};
}

std::vector<DataItem> output_partials(int32_t chunk, bool backward) {
  if (backward) return {DataItem{DataKind::dQ, 0, chunk}};
  return {DataItem{DataKind::O, 0, chunk}, DataItem{DataKind::LSE, 0, chunk}};
}

class Attention2dEmitter {
 public:
  Attention2dEmitter(ScheduleBuilder& builder, const BlockGrid& grid, Grid2d shape)
      : builder_(builder), grid_(grid), shape_(shape) {
    compute_ = builder.stream("compute");
  }

  bool computes_row(int32_t gpu, int32_t q) const {
    for (int32_t kv : shape_.kv_band(shape_.col_of(gpu)))
      if (grid_.has_work(q, kv)) return true;
    return false;
  }
  bool computes_column(int32_t gpu, int32_t kv) const {
    for (int32_t q : shape_.q_band(shape_.row_of(gpu)))
      if (grid_.has_work(q, kv)) return true;
    return false;
  }
  std::vector<BlockRef> blocks(const std::vector<int32_t>& queries, const std::vector<int32_t>& keys) const {
    std::vector<BlockRef> list;
    for (int32_t q : queries)
      for (int32_t kv : keys)
        if (grid_.has_work(q, kv)) list.push_back(BlockRef{0, q, kv});
    return list;
  }

  void collective_pass(Pass pass) {
    const bool backward = pass == Pass::backward;
    const int32_t gpus = shape_.rows * shape_.cols;
    const int32_t stream = builder_.stream("collective");
    std::vector<int32_t> all(static_cast<size_t>(gpus));
    for (int32_t gpu = 0; gpu < gpus; ++gpu) all[static_cast<size_t>(gpu)] = gpu;

    int32_t permute = builder_.begin_collective(CollectiveKind::permute, pass, all);
    for (int32_t chunk = 0; chunk < gpus; ++chunk)
      if (shape_.holder_of_kv(chunk) != chunk) {
        const DataItem kv{DataKind::KV, 0, chunk};
        builder_.add_transfer(permute, chunk, shape_.holder_of_kv(chunk), {&kv, 1});
      }
    std::vector<int32_t> row_gather, column_gather, row_scatter, column_scatter;
    for (int32_t r = 0; r < shape_.rows; ++r) {
      int32_t gather = builder_.begin_collective(CollectiveKind::all_gather, pass, shape_.row_members(r));
      for (int32_t src : shape_.row_members(r))
        for (int32_t dst : shape_.row_members(r))
          if (src != dst) builder_.add_transfer(gather, src, dst, q_side(src, backward));
      row_gather.push_back(gather);
      int32_t scatter = builder_.begin_collective(CollectiveKind::reduce_scatter, pass, shape_.row_members(r));
      for (int32_t src : shape_.row_members(r))
        for (int32_t owner : shape_.row_members(r))
          if (src != owner && computes_row(src, owner))
            builder_.add_transfer(scatter, src, owner, output_partials(owner, backward));
      row_scatter.push_back(scatter);
    }
    for (int32_t c = 0; c < shape_.cols; ++c) {
      int32_t gather = builder_.begin_collective(CollectiveKind::all_gather, pass, shape_.col_members(c));
      for (int32_t src : shape_.col_members(c))
        for (int32_t dst : shape_.col_members(c))
          if (src != dst) {
            const DataItem kv{DataKind::KV, 0, shape_.held_kv(src)};
            builder_.add_transfer(gather, src, dst, {&kv, 1});
          }
      column_gather.push_back(gather);
      if (backward) {
        int32_t scatter = builder_.begin_collective(CollectiveKind::reduce_scatter, pass, shape_.col_members(c));
        for (int32_t src : shape_.col_members(c))
          for (int32_t holder : shape_.col_members(c)) {
            const int32_t kv = shape_.held_kv(holder);
            if (src != holder && computes_column(src, kv)) {
              const DataItem partial{DataKind::dKV, 0, kv};
              builder_.add_transfer(scatter, src, holder, {&partial, 1});
            }
          }
        column_scatter.push_back(scatter);
      }
    }
    int32_t unpermute = -1;
    if (backward) {
      unpermute = builder_.begin_collective(CollectiveKind::permute, pass, all);
      for (int32_t chunk = 0; chunk < gpus; ++chunk)
        if (shape_.holder_of_kv(chunk) != chunk) {
          const DataItem partial{DataKind::dKV, 0, chunk};
          builder_.add_transfer(unpermute, shape_.holder_of_kv(chunk), chunk, {&partial, 1});
        }
    }

    for (int32_t gpu = 0; gpu < gpus; ++gpu) {
      const int32_t r = shape_.row_of(gpu), c = shape_.col_of(gpu);
      builder_.collective_op(gpu, stream, permute);
      builder_.collective_op(gpu, stream, row_gather[static_cast<size_t>(r)]);
      builder_.collective_op(gpu, stream, column_gather[static_cast<size_t>(c)]);
      builder_.compute(gpu, pass, blocks(shape_.q_band(r), shape_.kv_band(c)), compute_);
      builder_.collective_op(gpu, stream, row_scatter[static_cast<size_t>(r)]);
      if (receives_row_partials(gpu)) builder_.merge(gpu, compute_, output_partials(gpu, backward));
      if (backward) {
        builder_.collective_op(gpu, stream, column_scatter[static_cast<size_t>(c)]);
        const int32_t held = shape_.held_kv(gpu);
        if (receives_column_partials(gpu)) builder_.merge(gpu, compute_, {DataItem{DataKind::dKV, 0, held}});
        builder_.collective_op(gpu, stream, unpermute);
        if (shape_.holder_of_kv(gpu) != gpu) builder_.merge(gpu, compute_, {DataItem{DataKind::dKV, 0, gpu}});
      }
    }
  }

  // The programs of GPUs 0 .. emitted - 1 (all of them, or GPU 0's alone when held by rotation).
  void ring_pass(Pass pass, int32_t emitted) {
    const bool backward = pass == Pass::backward;
    const int32_t send = builder_.stream("send"), recv = builder_.stream("recv");
    for (int32_t gpu = 0; gpu < emitted; ++gpu) {
      const int32_t r = shape_.row_of(gpu), c = shape_.col_of(gpu);
      const int32_t held = shape_.held_kv(gpu);
      // Permute K/V point to point: send ours to its holder, receive the one we hold.
      if (shape_.holder_of_kv(gpu) != gpu) builder_.send(gpu, send, shape_.holder_of_kv(gpu), {DataItem{DataKind::KV, 0, gpu}});
      if (held != gpu) builder_.recv(gpu, recv, held, {DataItem{DataKind::KV, 0, held}});
      // Q around the row, each arrival computed against the K/V chunk we hold.
      builder_.compute(gpu, pass, blocks({gpu}, {held}), compute_);
      std::vector<int32_t> queries = {gpu};
      for (int32_t step = 1; step < shape_.cols; ++step) {
        const int32_t outgoing = shape_.gpu(r, (c - step + 1 + shape_.cols) % shape_.cols);
        const int32_t incoming = shape_.gpu(r, (c - step + shape_.cols) % shape_.cols);
        builder_.send(gpu, send, shape_.gpu(r, (c + 1) % shape_.cols), q_side(outgoing, backward));
        builder_.recv(gpu, recv, shape_.gpu(r, (c - 1 + shape_.cols) % shape_.cols), q_side(incoming, backward));
        builder_.compute(gpu, pass, blocks({incoming}, {held}), compute_);
        queries.push_back(incoming);
      }
      // Then K/V around the column, each arrival computed against the whole query band.
      for (int32_t step = 1; step < shape_.rows; ++step) {
        const int32_t outgoing = shape_.held_kv(shape_.gpu((r - step + 1 + shape_.rows) % shape_.rows, c));
        const int32_t incoming = shape_.held_kv(shape_.gpu((r - step + shape_.rows) % shape_.rows, c));
        builder_.send(gpu, send, shape_.gpu((r + 1) % shape_.rows, c), {DataItem{DataKind::KV, 0, outgoing}});
        builder_.recv(gpu, recv, shape_.gpu((r - 1 + shape_.rows) % shape_.rows, c), {DataItem{DataKind::KV, 0, incoming}});
        builder_.compute(gpu, pass, blocks(queries, {incoming}), compute_);
      }
      // Partials straight to their owners: rows first, then (backward) columns. In round k a
      // GPU sends to the owner k places on and receives from the GPU k places back, so each
      // round pairs the GPUs one to one and every pair sees its messages in one order.
      for (int32_t k = 1; k < shape_.cols; ++k) {
        const int32_t owner = shape_.gpu(r, (c + k) % shape_.cols);
        if (computes_row(gpu, owner)) builder_.send(gpu, send, owner, output_partials(owner, backward));
      }
      for (int32_t k = 1; k < shape_.cols; ++k) {
        const int32_t src = shape_.gpu(r, (c - k + shape_.cols) % shape_.cols);
        if (computes_row(src, gpu)) builder_.recv(gpu, recv, src, output_partials(gpu, backward));
      }
      if (receives_row_partials(gpu)) builder_.merge(gpu, compute_, output_partials(gpu, backward));
      if (backward) {
        // The K/V chunks of column c's band, from the one this GPU holds on (k = 0 is it); the
        // owner of chunk c' * rows + i hears from column c' in the matching order, row i first.
        for (int32_t k = 0; k < shape_.rows; ++k) {
          const int32_t kv = c * shape_.rows + (r + k) % shape_.rows;
          if (kv != gpu && computes_column(gpu, kv)) builder_.send(gpu, send, kv, {DataItem{DataKind::dKV, 0, kv}});
        }
        const int32_t holder_column = shape_.col_of(shape_.holder_of_kv(gpu));
        const int32_t holder_row = shape_.row_of(shape_.holder_of_kv(gpu));
        bool any = false;
        for (int32_t k = 0; k < shape_.rows; ++k) {
          const int32_t src = shape_.gpu((holder_row - k + shape_.rows) % shape_.rows, holder_column);
          if (src != gpu && computes_column(src, gpu)) {
            builder_.recv(gpu, recv, src, {DataItem{DataKind::dKV, 0, gpu}});
            any = true;
          }
        }
        if (any) builder_.merge(gpu, compute_, {DataItem{DataKind::dKV, 0, gpu}});
      }
    }
  }

 private:
  bool receives_row_partials(int32_t gpu) const {
    for (int32_t src : shape_.row_members(shape_.row_of(gpu)))
      if (src != gpu && computes_row(src, gpu)) return true;
    return false;
  }
  bool receives_column_partials(int32_t gpu) const {
    for (int32_t src : shape_.col_members(shape_.col_of(gpu)))
      if (src != gpu && computes_column(src, shape_.held_kv(gpu))) return true;
    return false;
  }

  ScheduleBuilder& builder_;
  const BlockGrid& grid_;
  Grid2d shape_;
  int32_t compute_;
};

}  // namespace

bool attention2d_is_one_ring(const GeneratorOptions& options) {
  const TileShape shape = options.tile.value_or(default_grid(options.gpus));
  return options.variant == "ring" && (shape.first == 1 || shape.second == 1);
}

Schedule generate_attention2d(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  TileShape shape = options.tile.value_or(default_grid(gpus));
  if (static_cast<int64_t>(shape.first) * shape.second != gpus)
    throw UserError("--tile: attention2d grid " + to_string(shape) + " has " + std::to_string(int64_t{shape.first} * shape.second) +
                    " GPUs, not " + std::to_string(gpus) + ": rows x cols must equal --gpus");
  const std::string variant = options.variant.empty() ? "collective" : options.variant;
  if (variant != "collective" && variant != "ring")
    throw UserError("attention2d variant '" + variant + "' is not one of collective, ring");
  ScheduleBuilder builder("attention2d", to_string(shape) + " " + variant + " " + to_string(grid.layout()), problem,
                          grid.layout(), gpus);
  // The ring variant on one row or one column is one ring of all P GPUs, with no permutation:
  // GPU g's program is GPU 0's shifted wherever the grid is the same along every diagonal.
  const bool one_ring = attention2d_is_one_ring(options);
  const bool by_rotation = options.by_rotation && one_ring && grid_is_rotation_invariant(grid);
  if (options.by_rotation && one_ring && !by_rotation) {
    // Estimated as GPU 0's program before the grid was known: every GPU's must fit too.
    GeneratorOptions full = options;
    full.by_rotation = false;
    require_schedule_memory("attention2d", problem, full);
  }
  const int32_t period = by_rotation ? held_period(1, options.rotation_period, gpus) : gpus;
  if (by_rotation) builder.set_form(ProgramForm::rotation, period);
  const int32_t emitted = period;
  if (variant == "ring") {
    // At most, per GPU emitted and pass: the permutation's send and recv and the first block;
    // 3 ops per step of either ring; a send and a recv per partial of the row and of the
    // column's band, and two merges. Blocks: the GPU's query band against its key band (P).
    // Items: 3 per op at most (Q, dO and Stats). Grown by doubling, these arrays were faulted
    // in twice over at 1,024 GPUs.
    const size_t passes = (problem.has_forward() ? 1 : 0) + (problem.has_backward() ? 1 : 0);
    const size_t per_gpu_ops = 3 + 3 * static_cast<size_t>(shape.first + shape.second) +
                               2 * static_cast<size_t>(shape.first + shape.second) + 2;
    const size_t most_ops = passes * static_cast<size_t>(emitted) * per_gpu_ops;
    builder.reserve(most_ops, passes * static_cast<size_t>(emitted) * static_cast<size_t>(gpus), 3 * most_ops);
  }
  Attention2dEmitter emitter(builder, grid, Grid2d{shape.first, shape.second});
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    builder.set_pass(pass);
    if (variant == "collective") {
      emitter.collective_pass(pass);
    } else {
      emitter.ring_pass(pass, emitted);
    }
  }
  Schedule schedule = builder.finish();
  schedule.tile = shape;
  return schedule;
}

}  // namespace tessera::schedules
