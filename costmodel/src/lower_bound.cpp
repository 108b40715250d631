#include "tessera/costmodel/lower_bound.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "tessera/core/data_size.hpp"

namespace tessera::costmodel {

namespace {

// Bytes per token of one lane on each side of a pass: the query side (per query lane) and the
// key side (per KV lane).
struct SideBytes {
  double query = 0;
  double key = 0;
  SideBytes operator+(const SideBytes& other) const { return {query + other.query, key + other.key}; }
};

// The relaxed problem of the header, for `groups` KV lanes that each serve `heads_per_kv`
// query lanes, on a GPU owning `own_tokens` of each, with at most `other_queries` other
// queries (summed over a KV lane's query lanes) and `other_keys` other keys per KV lane.
struct Relaxation {
  int64_t groups = 1;
  double heads_per_kv = 1;
  double own_tokens = 1;
  double other_queries = 0;
  double other_keys = 0;
};

// Feasibility is judged with a little slack: keeping a candidate that is infeasible by a
// rounding error can only lower the result, which keeps it a bound.
constexpr double kSlack = 1e-9;

// The bounds are summed in another order than the models sum a schedule's bytes and seconds, so
// a schedule that meets one exactly could come out a few ulps below it; they are lowered by this
// relative amount so that received / bound and time / bound never print below 1.
constexpr double kRoundingMargin = 1e-12;

// The least x SA + y SB such that m SA + k m SB + F(SA, SB) >= needed, where F is the greedy
// sum of A_g b_g (header). Cells of the (SA / A, SB / B) grid:
//  - off the diagonal F is linear (min(SA B, SB A)), so the constraint is a half-plane, and a
//    linear objective over a rectangle cut by a half-plane is least at a vertex, which lies on
//    a grid line SA = i A or SB = j B. On such a line the capacity grows with the other
//    variable, so its least feasible value is the best point of the line: the first two
//    candidates below cover every off-diagonal optimum.
//  - on diagonal cell c, with SA = c A + alpha and SB = c B + beta, the constraint reads
//    (alpha + k m)(beta + m) >= needed - (capacity of c full lanes) + k m^2: a convex region,
//    whose least point on the curve is the stationary point of a convex function, clamped.
// Every candidate is feasible, so the least of them is the exact minimum.
double least_bytes(const Relaxation& relaxation, SideBytes bytes, double needed) {
  if (needed <= 0) return 0;
  const double k = relaxation.heads_per_kv, m = relaxation.own_tokens;
  const double cap_a = relaxation.other_queries, cap_b = relaxation.other_keys;
  const double x = bytes.query, y = bytes.key;
  const int64_t n = relaxation.groups;
  const double most_a = static_cast<double>(n) * cap_a, most_b = static_cast<double>(n) * cap_b;
  double best = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i <= n; ++i) {
    const double lanes = static_cast<double>(i);
    {  // SA = i full KV lanes of other queries: the least SB.
      const double sa = lanes * cap_a, rest = needed - m * sa, knee = (k * m + cap_a) * lanes * cap_b;
      double sb = 0;
      if (rest > 0) sb = rest <= knee ? rest / (k * m + cap_a) : lanes * cap_b + (rest - knee) / (k * m);
      if (sb <= most_b * (1 + kSlack)) best = std::min(best, x * sa + y * sb);
    }
    {  // SB = i full KV lanes of other keys: the least SA.
      const double sb = lanes * cap_b, rest = needed - k * m * sb, knee = (m + cap_b) * lanes * cap_a;
      double sa = 0;
      if (rest > 0) sa = rest <= knee ? rest / (m + cap_b) : lanes * cap_a + (rest - knee) / m;
      if (sa <= most_a * (1 + kSlack)) best = std::min(best, x * sa + y * sb);
    }
  }
  for (int64_t c = 0; c < n; ++c) {
    const double full = static_cast<double>(c);
    const double rest = needed - full * (m * cap_a + k * m * cap_b + cap_a * cap_b);
    if (rest <= 0) continue;  // c full lanes suffice: a grid-line candidate above
    const double product = rest + k * m * m;  // (alpha + k m)(beta + m) >= product
    const double low = std::max(0.0, product / (m + cap_b) - k * m), high = std::min(cap_a, product / m - k * m);
    if (low > high * (1 + kSlack) + kSlack) continue;  // even the full cell falls short
    double alpha = high;                                // x = 0: queries are free
    if (y == 0) alpha = std::min(low, high);            // keys are free
    else if (x > 0) alpha = std::clamp(std::sqrt(y * product / x) - k * m, std::min(low, high), high);
    const double beta = std::clamp(product / (alpha + k * m) - m, 0.0, cap_b);
    best = std::min(best, x * (full * cap_a + alpha) + y * (full * cap_b + beta));
  }
  return std::isfinite(best) ? best : x * most_a + y * most_b;
}

// Bytes of one token of one lane of `kind`, from the item sizes every consumer uses.
double lane_token_bytes(const Problem& problem, DataKind kind) {
  Problem one_sequence = problem;
  one_sequence.batch = 1;
  const auto one_head_per_group = static_cast<int32_t>(problem.heads);
  return static_cast<double>(item_bytes(one_sequence, one_head_per_group, 1, kind));
}

// The figures the two arguments share.
struct Shape {
  Relaxation per_gpu;         // one GPU's B*G KV lanes
  Relaxation all_gpus;        // the P*B*G (GPU, KV lane) pairs together
  double triples = 0;         // T, per pass
  double free_largest = 0;    // B*H*D of the GPU with the largest diagonal block
  double free_total = 0;      // B*H*D summed over the GPUs
  double gpus = 1;
};

Shape shape_of(const Problem& problem, int32_t gpus, const BlockGrid& grid) {
  int64_t fewest = std::numeric_limits<int64_t>::max(), most = 0, largest_diagonal = 0, diagonals = 0;
  for (int64_t chunk = 0; chunk < grid.chunks(); ++chunk) {
    fewest = std::min(fewest, grid.chunk_tokens(chunk));
    most = std::max(most, grid.chunk_tokens(chunk));
    largest_diagonal = std::max(largest_diagonal, grid.pairs(chunk, chunk));
    diagonals += grid.pairs(chunk, chunk);
  }
  const double lanes = static_cast<double>(problem.batch * problem.heads);
  const double k = static_cast<double>(problem.heads / problem.kv_heads);
  const double others = static_cast<double>(problem.seq_len - fewest);
  Shape shape;
  shape.per_gpu = Relaxation{problem.batch * problem.kv_heads, k, static_cast<double>(most), k * others, others};
  shape.all_gpus = shape.per_gpu;
  shape.all_gpus.groups *= gpus;
  shape.triples = lanes * static_cast<double>(grid.total_pairs());
  shape.free_largest = lanes * static_cast<double>(largest_diagonal);
  shape.free_total = lanes * static_cast<double>(diagonals);
  shape.gpus = gpus;
  return shape;
}

// Argument 1: the inputs of the GPU with the most triples.
double busiest_inputs(const Shape& shape, SideBytes inputs) {
  return least_bytes(shape.per_gpu, inputs, shape.triples / shape.gpus - shape.free_largest);
}

// Argument 2, for one pass's triples: what all GPUs together move, per GPU.
double mean_traffic(const Shape& shape, SideBytes moved) {
  return least_bytes(shape.all_gpus, moved, shape.triples - shape.free_total) / shape.gpus;
}

// Everything communication_lower_bound reads: the problem's sizes, the GPU count and the grid
// (which its problem's length and mask, its layout and its chunk count make).
struct BoundKey {
  int64_t batch = 0, seq_len = 0, heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  int dtype = 0, pass = 0;
  int32_t gpus = 0;
  int64_t grid_seq_len = 0, window_tokens = 0, chunks = 0;
  int mask = 0, layout = 0;
  std::vector<int64_t> document_lengths;
  friend auto operator<=>(const BoundKey&, const BoundKey&) = default;
};

BoundKey bound_key(const Problem& problem, int32_t gpus, const BlockGrid& grid) {
  const Problem& tokens = grid.problem();
  return BoundKey{problem.batch,
                  problem.seq_len,
                  problem.heads,
                  problem.kv_heads,
                  problem.head_dim,
                  problem.head_dim_v,
                  static_cast<int>(problem.dtype),
                  static_cast<int>(problem.pass),
                  gpus,
                  tokens.seq_len,
                  tokens.mask.window_tokens,
                  grid.chunks(),
                  static_cast<int>(tokens.mask.kind),
                  static_cast<int>(grid.layout()),
                  tokens.mask.document_lengths};
}

}  // namespace

// A pure function of its key, whose scans (least_bytes) take O(P x batch x KV heads) steps, and
// which a sweep or a plan asks for one problem once per schedule it prices (every algorithm,
// tile and fidelity): each answer is remembered, for every thread, and the table is emptied when
// it is full (4096 problems, a few hundred kB).
LowerBound communication_lower_bound(const Problem& problem, int32_t gpus, const BlockGrid& grid) {
  static std::mutex mutex;
  static std::map<BoundKey, LowerBound> remembered;
  constexpr size_t kMostRemembered = 4096;
  BoundKey key = bound_key(problem, gpus, grid);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto found = remembered.find(key); found != remembered.end()) return found->second;
  }
  const LowerBound bound = communication_lower_bound_unremembered(problem, gpus, grid);
  std::lock_guard<std::mutex> lock(mutex);
  if (remembered.size() >= kMostRemembered) remembered.clear();
  remembered.emplace(std::move(key), bound);
  return bound;
}

LowerBound communication_lower_bound_unremembered(const Problem& problem, int32_t gpus, const BlockGrid& grid) {
  const Shape shape = shape_of(problem, gpus, grid);
  auto bytes = [&](DataKind kind) { return lane_token_bytes(problem, kind); };
  // Per token of one lane: what comes in for a query or key a GPU touches but does not own, and
  // the partial that must leave for it.
  const SideBytes forward_in{bytes(DataKind::Q), bytes(DataKind::KV)};
  const SideBytes forward_out{bytes(DataKind::O) + bytes(DataKind::LSE), 0};
  const SideBytes backward_kept_in{bytes(DataKind::dO) + bytes(DataKind::Stats), 0};  // beyond Q, K, V
  const SideBytes backward_in = forward_in + backward_kept_in;
  const SideBytes backward_out{bytes(DataKind::dQ), bytes(DataKind::dKV)};

  // Each scan once: with both passes the figures below ask for some of them twice, and a
  // scan over P x batch x KV heads lanes is most of the bound's time in a sweep.
  double forward_busiest = 0, forward_mean = 0, backward_busiest = 0, backward_mean = 0;
  if (problem.has_forward()) {
    forward_busiest = busiest_inputs(shape, forward_in);
    forward_mean = mean_traffic(shape, forward_in + forward_out);
  }
  if (problem.has_backward()) {
    backward_busiest = busiest_inputs(shape, backward_in);
    backward_mean = mean_traffic(shape, backward_in + backward_out);
  }
  LowerBound bound;
  if (problem.has_forward()) bound.forward_bytes = std::max(forward_busiest, forward_mean);
  if (problem.has_backward()) bound.backward_bytes = std::max(backward_busiest, backward_mean);
  if (problem.pass == Pass::forward) {
    bound.busiest_inputs_bytes = forward_busiest;
    bound.mean_traffic_bytes = forward_mean;
  } else if (problem.pass == Pass::backward) {
    bound.busiest_inputs_bytes = backward_busiest;
    bound.mean_traffic_bytes = backward_mean;
  } else {
    // Q, K and V may be received once for both passes: count them in one pass only.
    bound.busiest_inputs_bytes = backward_busiest;
    bound.mean_traffic_bytes =
        std::max(forward_mean + mean_traffic(shape, backward_kept_in + backward_out),
                 mean_traffic(shape, forward_out) + backward_mean);
  }
  bound.received_bytes = std::max(bound.busiest_inputs_bytes, bound.mean_traffic_bytes);
  for (double* figure : {&bound.forward_bytes, &bound.backward_bytes, &bound.received_bytes,
                        &bound.busiest_inputs_bytes, &bound.mean_traffic_bytes})
    *figure *= 1 - kRoundingMargin;
  return bound;
}

double least_busiest_compute_s(const Problem& problem, const BlockGrid& grid, int32_t gpus,
                               const ComputeOpSeconds& seconds) {
  // One query chunk's row of blocks at a time: one op each, all heads in one head group.
  Schedule ideal;
  ideal.algorithm = "least compute";
  ideal.problem = problem;
  ideal.layout = grid.layout();
  ideal.gpus = gpus;
  ideal.head_groups = 1;
  ideal.stream_names = {"compute"};
  double total_s = 0;
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if ((pass == Pass::forward && !problem.has_forward()) || (pass == Pass::backward && !problem.has_backward()))
      continue;
    for (int64_t q = 0; q < grid.chunks(); ++q) {
      ideal.blocks.edit([&](std::vector<BlockRef>& row) {
        row.clear();
        for (int64_t kv = 0; kv < grid.chunks(); ++kv)
          if (grid.has_work(q, kv)) row.push_back(BlockRef{0, static_cast<int32_t>(q), static_cast<int32_t>(kv)});
      });
      if (ideal.blocks.empty()) continue;
      Op op;
      op.kind = OpKind::compute;
      op.pass = pass;
      op.count = static_cast<uint32_t>(ideal.blocks.size());
      total_s += seconds(ideal, op);
    }
  }
  return total_s / gpus * (1 - kRoundingMargin);
}

int32_t streams_used(const Schedule& schedule, int32_t gpu, std::initializer_list<OpKind> kinds) {
  std::set<int32_t> streams;
  for (const Op& op : schedule.ops)
    if (op.gpu == gpu && std::find(kinds.begin(), kinds.end(), op.kind) != kinds.end()) streams.insert(op.stream);
  return static_cast<int32_t>(streams.size());
}

TimeLowerBound time_lower_bound(const Schedule& schedule, double least_compute_s, double bound_bytes,
                                double receive_bytes_per_s) {
  // The models run a GPU's streams at once: its compute may spread over all its compute streams.
  const size_t streams = schedule.stream_names.size();
  std::vector<uint8_t> computes_on(static_cast<size_t>(schedule.gpus) * streams, 0);
  std::vector<int32_t> compute_streams_of(static_cast<size_t>(schedule.gpus), 0);
  int32_t compute_streams = 1;
  for (const Op& op : schedule.ops) {
    if (op.kind != OpKind::compute) continue;
    uint8_t& seen = computes_on[static_cast<size_t>(op.gpu) * streams + static_cast<size_t>(op.stream)];
    if (seen) continue;
    seen = 1;
    compute_streams = std::max(compute_streams, ++compute_streams_of[static_cast<size_t>(op.gpu)]);
  }
  TimeLowerBound bound;
  bound.compute_s = least_compute_s / compute_streams;
  if (receive_bytes_per_s > 0) bound.communication_s = bound_bytes / receive_bytes_per_s;
  return bound;
}

TimeLowerBound time_lower_bound(const Schedule& schedule, const BlockGrid& grid, const ComputeOpSeconds& seconds,
                                double receive_bytes_per_s) {
  return time_lower_bound(schedule, least_busiest_compute_s(schedule.problem, grid, schedule.gpus, seconds),
                          communication_lower_bound(schedule.problem, schedule.gpus, grid).total_bytes(),
                          receive_bytes_per_s);
}

}  // namespace tessera::costmodel
