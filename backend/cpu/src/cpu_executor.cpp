#include "tessera/backend/cpu/cpu_executor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include "tessera/backend/device_buffers.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/rank_devices.hpp"
#include "tessera/core/pair_count.hpp"

namespace tessera::backend {

using schedules::ScheduleAnalysis;

namespace {

// Partial sums one rank holds for one chunk of one head group: forward O with its LSE, or
// gradients, over the group's heads only (heads and key/value heads counted from the group's
// first), so that folding one into another is the work of the bytes the simulator charges a
// merge. (Held over every head of the sequence, a Ulysses group's partials were u times larger
// than their bytes, and USP u=4 r=4's merges took 0.17 s against 0.03 s predicted: validations
// measured it 20-26 % slower than predicted: docs/measurements/cpu-rounds/2026-12-05-0152.)
struct Partial {
  std::vector<float> out, lse;       // [row][head][dv], [row][head]
  std::vector<float> d_q, d_k, d_v;  // [row][head][d], [row][kv head][d], [row][kv head][dv]
};

class Interpreter {
 public:
  Interpreter(const Schedule& schedule, const BlockGrid& grid, AttentionTensors& tensors)
      : schedule_(schedule), grid_(grid), tensors_(tensors), problem_(schedule.problem) {
    if (problem_.mask.kind == MaskKind::documents) documents_ = DocumentBounds(problem_.mask.document_lengths);
    const DType dtype = problem_.dtype;
    auto rounded = [&](const std::vector<double>& values) {
      std::vector<float> out(values.size());
      for (size_t index = 0; index < values.size(); ++index) out[index] = static_cast<float>(round_to_dtype(dtype, values[index]));
      return out;
    };
    q_ = rounded(tensors.q);
    k_ = rounded(tensors.k);
    v_ = rounded(tensors.v);
    if (problem_.has_backward()) {
      d_out_ = rounded(tensors.d_out);
      // Stats: the forward's LSE and delta = rowsum(dO * O), formed by each owner from its O.
      const int64_t heads = problem_.heads, dv = problem_.head_dim_v;
      lse_.assign(static_cast<size_t>(tensors.tokens * heads), 0);
      delta_.assign(lse_.size(), 0);
      for (int64_t t = 0; t < tensors.tokens; ++t)
        for (int64_t h = 0; h < heads; ++h) {
          lse_[static_cast<size_t>(t * heads + h)] = static_cast<float>(tensors.lse[static_cast<size_t>(t * heads + h)]);
          double sum = 0;
          for (int64_t e = 0; e < dv; ++e) {
            size_t at = static_cast<size_t>((t * heads + h) * dv + e);
            sum += static_cast<double>(d_out_[at]) * static_cast<float>(tensors.out[at]);
          }
          delta_[static_cast<size_t>(t * heads + h)] = static_cast<float>(sum);
        }
    }
    for (int64_t chunk = 0; chunk < grid.chunks(); ++chunk) chunk_tokens_.push_back(chunk_token_list(grid, chunk));
  }

  // The data actions of each op kind, shared by the sequential and the threaded run. The
  // stores of partials (local_, inbox_) are guarded by store_mutex_; a compute op holds it only
  // to find its partials and then works on them unlocked (the schedule's dependencies keep any
  // other op off a partial while a compute writes it; map nodes never move).
  using Staged = std::vector<std::pair<uint64_t, std::unique_ptr<Partial>>>;

  void compute(const Op& op) {
    for (const auto& block : schedule_.blocks_of(op)) {
      if (op.pass == Pass::forward) {
        Partial* out = nullptr;
        {
          std::lock_guard<std::mutex> lock(store_mutex_);
          out = &partial(local_, op.gpu, {DataKind::O, block.head_group, block.q_chunk});
        }
        forward_block(*out, block);
      } else {
        Partial *dq = nullptr, *dkv = nullptr;
        {
          std::lock_guard<std::mutex> lock(store_mutex_);
          dq = &partial(local_, op.gpu, {DataKind::dQ, block.head_group, block.q_chunk});
          dkv = &partial(local_, op.gpu, {DataKind::dKV, block.head_group, block.kv_chunk});
        }
        backward_block(*dq, *dkv, block);
      }
    }
  }
  // A send takes the partials it carries off its rank when it is posted.
  Staged take_sent(const Op& op) {
    std::lock_guard<std::mutex> lock(store_mutex_);
    Staged staged;
    for (const auto& item : schedule_.items_of(op))
      if (carries_data(item)) staged.emplace_back(key(op.peer, item), take(op.gpu, item));
    return staged;
  }
  // Its recv puts them in the receiver's inbox, where a merge finds them.
  void deliver(Staged staged) {
    std::lock_guard<std::mutex> lock(store_mutex_);
    for (auto& [where, value] : staged) fold(inbox_, where, std::move(value));
  }
  // A collective's transfers, in the order listed, once every member has reached it.
  void collective(size_t index) {
    std::lock_guard<std::mutex> lock(store_mutex_);
    for (const auto& transfer : schedule_.collectives[index].transfers)
      for (const auto& item : schedule_.items_of(transfer))
        if (carries_data(item)) fold(inbox_, key(transfer.dst, item), take(transfer.src, item));
  }
  // A merge holds the lock only to find its partials, and folds them unlocked, as a compute op
  // works: folded under the lock, a merge stalled every rank's next op, and more so when the OS
  // preempted its thread there (16 ranks on 2 cores: ring's 240 merges took 0.46 s against
  // 0.11 s predicted, and the validation measured 13 % over its prediction).
  void merge(const Op& op) {
    std::vector<std::pair<Partial*, std::unique_ptr<Partial>>> folds;
    {
      std::lock_guard<std::mutex> lock(store_mutex_);
      for (const auto& item : schedule_.items_of(op)) {
        if (!carries_data(item)) continue;
        auto it = inbox_.find(key(op.gpu, item));
        if (it == inbox_.end()) continue;
        std::unique_ptr<Partial> arrived = std::move(it->second);
        inbox_.erase(it);
        auto& slot = local_[key(op.gpu, item)];
        if (!slot)
          slot = std::move(arrived);
        else
          folds.emplace_back(slot.get(), std::move(arrived));
      }
    }
    for (auto& [into, arrived] : folds) fold_into(*into, *arrived);
  }

  // One rank after another in the analysis' execution order: the reference the threaded run is
  // compared with (tests), and a run with nothing concurrent. `on_op(index, started)` brackets
  // every op; may be empty.
  void run_sequentially(const ScheduleAnalysis& analysis, const std::function<void(uint32_t, bool)>& on_op) {
    std::vector<uint8_t> posted(schedule_.ops.size(), 0), collective_done(schedule_.collectives.size(), 0);
    std::vector<Staged> staged(schedule_.ops.size());
    for (uint32_t index : schedules::execution_order(schedule_, analysis)) {
      const Op& op = schedule_.ops[index];
      if (on_op) on_op(index, true);
      posted[index] = 1;
      switch (op.kind) {
        case OpKind::compute: compute(op); break;
        case OpKind::merge: merge(op); break;
        case OpKind::send:
        case OpKind::recv: {
          const auto partner = static_cast<uint32_t>(analysis.partner[index]);
          const uint32_t send = op.kind == OpKind::send ? index : partner;
          if (op.kind == OpKind::send) staged[send] = take_sent(op);
          if (posted[partner]) deliver(std::move(staged[send]));
          break;
        }
        case OpKind::collective: {
          const auto c = static_cast<size_t>(op.peer);
          if (!collective_done[c]) collective(c);
          collective_done[c] = 1;
          break;
        }
      }
      if (on_op) on_op(index, false);
    }
    collect_outputs();
  }

  void collect_outputs() {
    std::lock_guard<std::mutex> lock(store_mutex_);
    collect_outputs_locked();
  }

 private:
  static bool carries_data(const DataItem& item) {
    return item.kind == DataKind::O || item.kind == DataKind::dQ || item.kind == DataKind::dKV;
  }
  // Partials are found by (rank, item): rank in 20 bits, kind 4, head group 16, chunk 24
  // (can_run refuses schedules beyond these).
  static uint64_t key(int32_t gpu, const DataItem& item) {
    return (static_cast<uint64_t>(gpu) << 44) | (static_cast<uint64_t>(item.kind) << 40) |
           (static_cast<uint64_t>(item.head_group) << 24) | static_cast<uint64_t>(item.chunk);
  }
  using Store = std::unordered_map<uint64_t, std::unique_ptr<Partial>>;

  Partial& partial(Store& store, int32_t gpu, const DataItem& item) {
    auto& slot = store[key(gpu, item)];
    if (!slot) slot = empty_partial(item);
    return *slot;
  }
  std::unique_ptr<Partial> empty_partial(const DataItem& item) const {
    auto partial = std::make_unique<Partial>();
    const auto rows = static_cast<size_t>(grid_.chunk_tokens(item.chunk));
    const GroupHeads group = group_heads(item.head_group);
    const auto h = static_cast<size_t>(group.count), g = static_cast<size_t>(group.kv_count);
    const auto d = static_cast<size_t>(problem_.head_dim), dv = static_cast<size_t>(problem_.head_dim_v);
    if (item.kind == DataKind::O) {
      partial->out.assign(rows * h * dv, 0);
      partial->lse.assign(rows * h, -std::numeric_limits<float>::infinity());
    } else if (item.kind == DataKind::dQ) {
      partial->d_q.assign(rows * h * d, 0);
    } else {
      partial->d_k.assign(rows * g * d, 0);
      partial->d_v.assign(rows * g * dv, 0);
    }
    return partial;
  }
  std::unique_ptr<Partial> take(int32_t gpu, const DataItem& item) {
    auto it = local_.find(key(gpu, item));
    if (it == local_.end()) return empty_partial(item);
    std::unique_ptr<Partial> value = std::move(it->second);
    local_.erase(it);
    return value;
  }
  // Folds a partial into store[where] (moved there where it holds none yet).
  void fold(Store& store, uint64_t where, std::unique_ptr<Partial> value) {
    auto& slot = store[where];
    if (!slot) {
      slot = std::move(value);
      return;
    }
    fold_into(*slot, *value);
  }
  // Adds `value` into `into`: LSE-weighted for outputs, sums for gradients.
  void fold_into(Partial& into, const Partial& value) const {
    for (size_t index = 0; index < value.d_q.size(); ++index) into.d_q[index] += value.d_q[index];
    for (size_t index = 0; index < value.d_k.size(); ++index) into.d_k[index] += value.d_k[index];
    for (size_t index = 0; index < value.d_v.size(); ++index) into.d_v[index] += value.d_v[index];
    const size_t dv = static_cast<size_t>(problem_.head_dim_v);
    for (size_t row_head = 0; row_head < value.lse.size(); ++row_head) {
      float a = into.lse[row_head], b = value.lse[row_head];
      if (b == -std::numeric_limits<float>::infinity()) continue;
      float merged = a == -std::numeric_limits<float>::infinity() ? b : std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
      float wa = a == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(a - merged), wb = std::exp(b - merged);
      for (size_t e = 0; e < dv; ++e)
        into.out[row_head * dv + e] = wa * into.out[row_head * dv + e] + wb * value.out[row_head * dv + e];
      into.lse[row_head] = merged;
    }
  }

  // The key/value head a query head reads.
  int64_t kv_head_of(int64_t head) const { return head / (problem_.heads / problem_.kv_heads); }
  // A head group's query heads, and the key/value heads they read (one shared by several groups
  // under GQA, or several of them): the heads its partials hold.
  struct GroupHeads {
    int64_t first = 0, count = 0, first_kv = 0, kv_count = 0;
  };
  GroupHeads group_heads(int32_t head_group) const {
    const int64_t count = problem_.heads / schedule_.head_groups, first = head_group * count;
    const int64_t first_kv = kv_head_of(first), last_kv = kv_head_of(first + count - 1) + 1;
    return {first, count, first_kv, last_kv - first_kv};
  }
  float scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(problem_.head_dim))); }

  void forward_block(Partial& into, const BlockRef& block) {
    const auto& queries = chunk_tokens_[static_cast<size_t>(block.q_chunk)];
    const auto& keys = chunk_tokens_[static_cast<size_t>(block.kv_chunk)];
    const int64_t H = problem_.heads, G = problem_.kv_heads, d = problem_.head_dim, dv = problem_.head_dim_v;
    const GroupHeads group = group_heads(block.head_group);
    std::vector<float> scores(keys.size());
    std::vector<float> sum(static_cast<size_t>(dv));
    for (size_t row = 0; row < queries.size(); ++row) {
      const int64_t t = queries[row];
      for (int64_t h = group.first; h < group.first + group.count; ++h) {
        const int64_t kvh = kv_head_of(h);
        float maximum = -std::numeric_limits<float>::infinity();
        for (size_t col = 0; col < keys.size(); ++col) {
          if (!attends(problem_.mask, documents_, t, keys[col])) {
            scores[col] = -std::numeric_limits<float>::infinity();
            continue;
          }
          float dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += q_[static_cast<size_t>((t * H + h) * d + e)] * k_[static_cast<size_t>((keys[col] * G + kvh) * d + e)];
          scores[col] = dot * scale();
          maximum = std::max(maximum, scores[col]);
        }
        if (maximum == -std::numeric_limits<float>::infinity()) continue;  // row fully masked here
        float total = 0;
        std::fill(sum.begin(), sum.end(), 0.0f);
        for (size_t col = 0; col < keys.size(); ++col) {
          if (scores[col] == -std::numeric_limits<float>::infinity()) continue;
          float p = std::exp(scores[col] - maximum);
          total += p;
          for (int64_t e = 0; e < dv; ++e) sum[static_cast<size_t>(e)] += p * v_[static_cast<size_t>((keys[col] * G + kvh) * dv + e)];
        }
        // Merge this block's (O, LSE) into the running partial of the row and head.
        const auto row_head = static_cast<size_t>(static_cast<int64_t>(row) * group.count + h - group.first);
        float block_lse = maximum + std::log(total);
        float a = into.lse[row_head];
        float merged = a == -std::numeric_limits<float>::infinity() ? block_lse
                                                                     : std::max(a, block_lse) + std::log1p(std::exp(-std::abs(a - block_lse)));
        float wa = a == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(a - merged), wb = std::exp(block_lse - merged);
        for (int64_t e = 0; e < dv; ++e) {
          float& o = into.out[row_head * static_cast<size_t>(dv) + static_cast<size_t>(e)];
          o = wa * o + wb * (sum[static_cast<size_t>(e)] / total);
        }
        into.lse[row_head] = merged;
      }
    }
  }

  void backward_block(Partial& dq_into, Partial& dkv_into, const BlockRef& block) {
    const auto& queries = chunk_tokens_[static_cast<size_t>(block.q_chunk)];
    const auto& keys = chunk_tokens_[static_cast<size_t>(block.kv_chunk)];
    const int64_t H = problem_.heads, G = problem_.kv_heads, d = problem_.head_dim, dv = problem_.head_dim_v;
    const GroupHeads group = group_heads(block.head_group);
    for (size_t row = 0; row < queries.size(); ++row) {
      const int64_t t = queries[row];
      for (int64_t h = group.first; h < group.first + group.count; ++h) {
        const int64_t kvh = kv_head_of(h);
        // Where the row's head and the key's key/value head sit in the group's partials.
        const auto q_at = static_cast<size_t>((static_cast<int64_t>(row) * group.count + h - group.first) * d);
        const auto local_kv = static_cast<size_t>(kvh - group.first_kv), kv_count = static_cast<size_t>(group.kv_count);
        const float lse = lse_[static_cast<size_t>(t * H + h)], delta = delta_[static_cast<size_t>(t * H + h)];
        for (size_t col = 0; col < keys.size(); ++col) {
          const int64_t s = keys[col];
          if (!attends(problem_.mask, documents_, t, s)) continue;
          float dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += q_[static_cast<size_t>((t * H + h) * d + e)] * k_[static_cast<size_t>((s * G + kvh) * d + e)];
          const float p = std::exp(dot * scale() - lse);
          float dp = 0;
          for (int64_t e = 0; e < dv; ++e) {
            const float g_out = d_out_[static_cast<size_t>((t * H + h) * dv + e)];
            dp += g_out * v_[static_cast<size_t>((s * G + kvh) * dv + e)];
            dkv_into.d_v[(col * kv_count + local_kv) * static_cast<size_t>(dv) + static_cast<size_t>(e)] += p * g_out;
          }
          const float ds = p * (dp - delta) * scale();
          for (int64_t e = 0; e < d; ++e) {
            dq_into.d_q[q_at + static_cast<size_t>(e)] += ds * k_[static_cast<size_t>((s * G + kvh) * d + e)];
            dkv_into.d_k[(col * kv_count + local_kv) * static_cast<size_t>(d) + static_cast<size_t>(e)] +=
                ds * q_[static_cast<size_t>((t * H + h) * d + e)];
          }
        }
      }
    }
  }

  void collect_outputs_locked() {
    const int64_t H = problem_.heads, G = problem_.kv_heads, d = problem_.head_dim, dv = problem_.head_dim_v;
    const int64_t N = tensors_.tokens;
    if (problem_.has_forward()) {
      tensors_.out.assign(static_cast<size_t>(N * H * dv), 0);
      tensors_.lse.assign(static_cast<size_t>(N * H), 0);
    }
    if (problem_.has_backward()) {
      tensors_.d_q.assign(static_cast<size_t>(N * H * d), 0);
      tensors_.d_k.assign(static_cast<size_t>(N * G * d), 0);
      tensors_.d_v.assign(static_cast<size_t>(N * G * dv), 0);
    }
    for (int32_t chunk = 0; chunk < schedule_.chunks(); ++chunk) {
      const auto& tokens = chunk_tokens_[static_cast<size_t>(chunk)];
      const int32_t owner = schedule_.owner(chunk);
      for (int32_t hg = 0; hg < schedule_.head_groups; ++hg) {
        const GroupHeads group = group_heads(hg);
        auto find = [&](DataKind kind) -> const Partial* {
          auto it = local_.find(key(owner, {kind, hg, chunk}));
          return it == local_.end() ? nullptr : it->second.get();
        };
        for (size_t row = 0; row < tokens.size(); ++row) {
          const int64_t t = tokens[row];
          for (int64_t h = group.first; h < group.first + group.count; ++h) {
            const auto row_head = static_cast<size_t>(static_cast<int64_t>(row) * group.count + h - group.first);
            if (const Partial* out = find(DataKind::O)) {
              tensors_.lse[static_cast<size_t>(t * H + h)] = out->lse[row_head];
              for (int64_t e = 0; e < dv; ++e)
                tensors_.out[static_cast<size_t>((t * H + h) * dv + e)] = out->out[row_head * static_cast<size_t>(dv) + static_cast<size_t>(e)];
            }
            if (const Partial* grad = find(DataKind::dQ))
              for (int64_t e = 0; e < d; ++e)
                tensors_.d_q[static_cast<size_t>((t * H + h) * d + e)] = grad->d_q[row_head * static_cast<size_t>(d) + static_cast<size_t>(e)];
          }
          // Key/value gradients: head groups sharing a (replicated) KV head add up.
          if (const Partial* grad = find(DataKind::dKV)) {
            for (int64_t local = 0; local < group.kv_count; ++local) {
              const int64_t kvh = group.first_kv + local;
              const auto at = static_cast<size_t>(static_cast<int64_t>(row) * group.kv_count + local);
              for (int64_t e = 0; e < d; ++e)
                tensors_.d_k[static_cast<size_t>((t * G + kvh) * d + e)] += grad->d_k[at * static_cast<size_t>(d) + static_cast<size_t>(e)];
              for (int64_t e = 0; e < dv; ++e)
                tensors_.d_v[static_cast<size_t>((t * G + kvh) * dv + e)] += grad->d_v[at * static_cast<size_t>(dv) + static_cast<size_t>(e)];
            }
          }
        }
      }
    }
  }

  const Schedule& schedule_;
  const BlockGrid& grid_;
  AttentionTensors& tensors_;
  const Problem& problem_;
  DocumentBounds documents_;
  std::vector<float> q_, k_, v_, d_out_, lse_, delta_;
  std::vector<std::vector<int64_t>> chunk_tokens_;
  std::mutex store_mutex_;
  Store local_, inbox_;
};

}  // namespace

namespace {

// Each rank on its own thread, pinned to the core of its device (ranks_on_devices), so ranks
// sharing a core share it as the OS time-slices them. An op runs once its dependencies are done
// (its stream's previous op, the data it reads, a free receive buffer: the analysis' deps);
// a rank's thread runs its compute and merge ops one at a time; its sends, receives and
// collective arrivals are posted the moment they are ready, by whichever thread made them so,
// and never wait: the rank's other streams go on. A send and its
// recv complete together once both are posted (rendezvous), a collective once every member has
// reached it; the thread that completes one makes the copy. A transfer copies the bytes the
// simulator charges for it (data_size.hpp) into the receiver's buffer for that stream, so that
// it costs what a device copy costs; the partials it carries are handed over with it (ranks
// share one address space, and the inputs every rank reads are in it from the start).
// No op starts before every rank's thread is on its core, and the run's clock starts then, as a
// GPU run's first event comes after its devices are up: starting a thread on an idle core of a
// VM took about 2 ms here (the median gap between the starts of two ranks' first ops), which
// made two 4 ms blocks on two cores look like 1.3-1.5x the throughput of one, while each block
// ran at 1.9-2.0x (docs/measurements/cpu-rounds/2026-12-05-start-barrier).
class ThreadedRun {
 public:
  using Clock = std::chrono::steady_clock;
  ThreadedRun(const schedules::CheckedSchedule& checked, Interpreter& interpreter, std::vector<int32_t> device_of_rank,
              ExecutionRecord& record)
      : schedule_(checked.schedule()),
        grid_(checked.grid()),
        analysis_(checked.analysis()),
        successors_(schedules::reverse_dependencies(analysis_)),
        interpreter_(interpreter),
        device_of_rank_(std::move(device_of_rank)),
        record_(record),
        wake_(static_cast<size_t>(schedule_.gpus)),
        ready_(static_cast<size_t>(schedule_.gpus)),
        pending_(schedule_.ops.size()),
        posted_(schedule_.ops.size(), 0),
        staged_(schedule_.ops.size()),
        arrived_(schedule_.collectives.size(), 0),
        remaining_(static_cast<size_t>(schedule_.gpus), 0),
        buffer_of_op_(schedule_.ops.size(), -1) {
    const size_t streams = std::max<size_t>(1, schedule_.stream_names.size());
    std::vector<int32_t> buffer_of_stream(static_cast<size_t>(schedule_.gpus) * streams, -1);
    int64_t largest_bytes = 0;
    for (size_t op = 0; op < schedule_.ops.size(); ++op) {
      const Op& o = schedule_.ops[op];
      pending_[op] = static_cast<uint32_t>(analysis_.deps_of(op).size());
      ++remaining_[static_cast<size_t>(o.gpu)];
      if (o.kind != OpKind::recv && o.kind != OpKind::collective) continue;
      // One receive buffer per (rank, stream): a stream has one transfer in flight at a time.
      int32_t& buffer = buffer_of_stream[static_cast<size_t>(o.gpu) * streams + static_cast<size_t>(std::max(0, o.stream)) % streams];
      if (buffer < 0) {
        buffer = static_cast<int32_t>(receive_buffers_.size());
        receive_buffers_.emplace_back();
      }
      buffer_of_op_[op] = buffer;
      const int64_t bytes = o.kind == OpKind::recv ? op_bytes(schedule_.items_of(o)) : 0;
      largest_bytes = std::max(largest_bytes, bytes);
    }
    for (const Collective& collective : schedule_.collectives)
      for (const auto& transfer : collective.transfers) largest_bytes = std::max(largest_bytes, op_bytes(schedule_.items_of(transfer)));
    source_bytes_.assign(static_cast<size_t>(largest_bytes), 1);
  }

  void run() {
    for (uint32_t op = 0; op < pending_.size(); ++op)
      if (pending_[op] == 0) ready_[static_cast<size_t>(schedule_.ops[op].gpu)].push_back(op);
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(schedule_.gpus));
    try {
      for (int32_t rank = 0; rank < schedule_.gpus; ++rank) threads.emplace_back([this, rank] { rank_loop(rank); });
    } catch (...) {  // no thread for a rank: the ones started must not wait for it
      {
        std::lock_guard<std::mutex> lock(mutex_);
        failed_ = true;
        error_ = std::current_exception();
      }
      started_ = Clock::now();
      go_.store(true, std::memory_order_release);
    }
    for (auto& thread : threads) thread.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  int64_t op_bytes(std::span<const DataItem> items) const {
    int64_t bytes = 0;
    for (const auto& item : items) bytes += item_bytes(schedule_, grid_, item);
    return bytes;
  }
  double now_s() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

  void rank_loop(int32_t rank) {
    pin_to_core(device_of_rank_[static_cast<size_t>(rank)]);
    wait_for_every_rank();
    auto& ready = ready_[static_cast<size_t>(rank)];
    std::unique_lock<std::mutex> lock(mutex_);
    try {
      while (true) {
        wake_[static_cast<size_t>(rank)].wait(lock, [&] { return failed_ || !ready.empty() || remaining_[static_cast<size_t>(rank)] == 0; });
        if (failed_ || ready.empty()) return;
        const uint32_t index = ready.front();
        ready.pop_front();
        run_op(index, lock);
        post_ready_transfers(lock);
      }
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      if (!error_) error_ = std::current_exception();
      failed_ = true;
      for (auto& wake : wake_) wake.notify_all();
    }
  }

  // The last thread to arrive starts the clock and lets the others go. They wait spinning (and
  // yielding to threads pinned to the same core), not blocked: a blocked thread's wake-up on an
  // idle core is the very delay this waits out.
  void wait_for_every_rank() {
    if (arrived_ranks_.fetch_add(1, std::memory_order_acq_rel) + 1 == schedule_.gpus) {
      started_ = Clock::now();
      go_.store(true, std::memory_order_release);
      return;
    }
    while (!go_.load(std::memory_order_acquire)) std::this_thread::yield();
  }

  // Called with the lock held; the work itself runs unlocked.
  void run_op(uint32_t index, std::unique_lock<std::mutex>& lock) {
    const Op& op = schedule_.ops[index];
    record_.op_start_s[index] = now_s();
    posted_[index] = 1;
    switch (op.kind) {
      case OpKind::compute:
      case OpKind::merge:
        lock.unlock();
        if (op.kind == OpKind::compute)
          interpreter_.compute(op);
        else
          interpreter_.merge(op);
        lock.lock();
        complete(index);
        break;
      case OpKind::send:
      case OpKind::recv: {
        const auto partner = static_cast<uint32_t>(analysis_.partner[index]);
        const uint32_t send = op.kind == OpKind::send ? index : partner, recv = op.kind == OpKind::send ? partner : index;
        // Taken under the lock, so that a recv that finds its send posted finds its partials.
        if (op.kind == OpKind::send) staged_[send] = interpreter_.take_sent(op);
        if (!posted_[partner]) break;
        Interpreter::Staged carried = std::move(staged_[send]);
        lock.unlock();
        copy_bytes(buffer_of_op_[recv], op_bytes(schedule_.items_of(schedule_.ops[recv])));
        interpreter_.deliver(std::move(carried));
        lock.lock();
        const double done_s = now_s();  // the pair completes together
        complete(send, done_s);
        complete(recv, done_s);
        break;
      }
      case OpKind::collective: {
        const auto c = static_cast<size_t>(op.peer);
        const auto& members = analysis_.collective_ops[c];
        if (++arrived_[c] < members.size()) break;
        lock.unlock();
        for (const auto& transfer : schedule_.collectives[c].transfers) {
          int32_t buffer = buffer_of_op_[index];
          for (uint32_t member : members)
            if (schedule_.ops[member].gpu == transfer.dst) buffer = buffer_of_op_[member];
          copy_bytes(buffer, op_bytes(schedule_.items_of(transfer)));
        }
        interpreter_.collective(c);
        lock.lock();
        const double done_s = now_s();  // every member completes together
        for (uint32_t member : members) complete(member, done_s);
        break;
      }
    }
  }
  // Sends, receives and collective arrivals are posted as soon as they are ready, by whichever
  // thread made them ready (as a GPU's communication does not wait for its compute stream), so
  // a rank busy computing does not hold back its peers' rendezvous.
  void post_ready_transfers(std::unique_lock<std::mutex>& lock) {
    while (!posts_.empty()) {
      const uint32_t index = posts_.back();
      posts_.pop_back();
      run_op(index, lock);
    }
  }

  void copy_bytes(int32_t buffer, int64_t bytes) {
    if (buffer < 0 || bytes <= 0) return;
    std::vector<char>& into = receive_buffers_[static_cast<size_t>(buffer)];
    if (into.size() < static_cast<size_t>(bytes)) into.resize(static_cast<size_t>(bytes));
    std::memcpy(into.data(), source_bytes_.data(), static_cast<size_t>(bytes));
  }

  void complete(uint32_t index) { complete(index, now_s()); }
  void complete(uint32_t index, double finish_s) {
    record_.op_finish_s[index] = finish_s;
    const auto rank = static_cast<size_t>(schedule_.ops[index].gpu);
    if (--remaining_[rank] == 0) wake_[rank].notify_all();
    for (uint32_t next : successors_.of(index)) {
      if (--pending_[next] != 0) continue;
      const Op& ready_op = schedule_.ops[next];
      if (ready_op.kind == OpKind::send || ready_op.kind == OpKind::recv || ready_op.kind == OpKind::collective) {
        posts_.push_back(next);
        continue;
      }
      const auto owner = static_cast<size_t>(ready_op.gpu);
      ready_[owner].push_back(next);
      wake_[owner].notify_one();
    }
  }

  void pin_to_core(int32_t device) const {
#ifdef __linux__
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    std::vector<int> cores;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
    if (cores.empty()) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cores[static_cast<size_t>(device) % cores.size()], &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);  // best effort: unpinned threads still run correctly
#else
    (void)device;
#endif
  }

  const Schedule& schedule_;
  const BlockGrid& grid_;
  const ScheduleAnalysis& analysis_;
  const schedules::Successors successors_;  // the ops each op's completion may start
  Interpreter& interpreter_;
  const std::vector<int32_t> device_of_rank_;
  ExecutionRecord& record_;
  std::atomic<int32_t> arrived_ranks_{0};
  std::atomic<bool> go_{false};
  Clock::time_point started_;  // written before go_ is set, read after it is seen

  std::mutex mutex_;  // everything below, and the record's times
  std::vector<std::condition_variable> wake_;   // per rank
  std::vector<std::deque<uint32_t>> ready_;     // per rank, in the order they became ready
  std::vector<uint32_t> pending_;               // dependencies not yet done, per op
  std::vector<uint8_t> posted_;
  std::vector<uint32_t> posts_;                 // transfers ready to be posted
  std::vector<Interpreter::Staged> staged_;     // per send: the partials it carries
  std::vector<size_t> arrived_;                 // per collective: members that reached it
  std::vector<int64_t> remaining_;              // per rank: ops not yet complete
  std::vector<int32_t> buffer_of_op_;           // receive buffer of each recv and collective op
  std::vector<std::vector<char>> receive_buffers_;
  std::vector<char> source_bytes_;
  bool failed_ = false;
  std::exception_ptr error_;
};

}  // namespace

int32_t cpu_cores() {
#ifdef __linux__
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
#endif
  return static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

int32_t cpu_devices(int32_t ranks, int32_t devices) {
  return std::clamp(devices > 0 ? devices : cpu_cores(), 1, std::max(1, ranks));
}

void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, int32_t devices) {
  ExecutionRecord record;
  execute_on_cpu(checked, tensors, record, devices);
}

void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record,
                    int32_t devices) {
  require_full_program(checked.schedule(), "execute_on_cpu");
  using Clock = ThreadedRun::Clock;
  const auto called = Clock::now();
  const Schedule& schedule = checked.schedule();
  const int32_t used = cpu_devices(schedule.gpus, devices);
  record.device = "CPU threads (" + std::to_string(schedule.gpus) + " ranks on " + std::to_string(used) +
                  (used == 1 ? " core)" : " cores)");
  record.device_of_rank = ranks_on_devices(schedule.gpus, used);
  record.devices = used;
  record.op_start_s.assign(schedule.ops.size(), 0);
  record.op_finish_s.assign(schedule.ops.size(), 0);
  Interpreter interpreter(schedule, checked.grid(), tensors);
  // Op times count from the moment every rank's thread is up (ThreadedRun): preparing the
  // inputs (rounding them to the dtype) and starting the threads are set-up, as copying them to
  // a GPU is for the CUDA executor; wall_s has them.
  ThreadedRun(checked, interpreter, record.device_of_rank, record).run();
  interpreter.collect_outputs();
  record.makespan_s = 0;
  for (double finish_s : record.op_finish_s) record.makespan_s = std::max(record.makespan_s, finish_s);
  record.wall_s = std::chrono::duration<double>(Clock::now() - called).count();
}

void execute_on_cpu_sequentially(const schedules::CheckedSchedule& checked, AttentionTensors& tensors) {
  require_full_program(checked.schedule(), "execute_on_cpu_sequentially");
  Interpreter interpreter(checked.schedule(), checked.grid(), tensors);
  interpreter.run_sequentially(checked.analysis(), {});
}

namespace {

constexpr int32_t kMaxCpuRanks = 4096;

class CpuExecutor final : public ScheduleExecutor {
 public:
  std::string name() const override { return "cpu"; }
  Readiness can_run(const schedules::CheckedSchedule& checked) const override {
    const Schedule& schedule = checked.schedule();
    // Each rank is a thread: a few thousand are what a process can start without trouble.
    if (schedule.gpus > kMaxCpuRanks || schedule.chunks() >= (1 << 24) || schedule.head_groups >= (1 << 16))
      return Readiness::unsupported("the CPU executor runs at most " + std::to_string(kMaxCpuRanks) +
                                    " ranks (each a thread), 2^24 chunks and 2^16 head groups");
    // One sequence: the tensors hold no batch dimension (tensors.hpp).
    if (schedule.problem.batch != 1)
      return Readiness::unsupported("the schedule's problem has batch " + std::to_string(schedule.problem.batch) +
                                    "; the executors run one sequence (batch 1)");
    try {
      require_host_tensor_memory(schedule.problem);
    } catch (const UserError& refusal) {
      return Readiness::unsupported(refusal.what());
    }
    return Readiness::ready();
  }
  explicit CpuExecutor(int32_t devices) : devices_(devices) {}
  std::vector<int32_t> planned_devices(int32_t ranks) const override {
    return ranks_on_devices(ranks, cpu_devices(ranks, devices_));
  }
  void execute(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record) override {
    execute_on_cpu(checked, tensors, record, devices_);
  }

 private:
  int32_t devices_ = 0;
};

}  // namespace

std::unique_ptr<ScheduleExecutor> make_cpu_executor(int32_t devices) { return std::make_unique<CpuExecutor>(devices); }

}  // namespace tessera::backend
