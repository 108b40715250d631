#include "tessera/backend/cpu/cpu_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <unordered_map>

#include "tessera/backend/device_buffers.hpp"
#include "tessera/backend/reference.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/pair_count.hpp"

namespace tessera::backend {

using schedules::ScheduleAnalysis;

namespace {

// Partial sums one rank holds for one chunk: forward O with its LSE, or gradients. Stored
// over all heads of the sequence (only the head group's heads are ever touched).
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

  // `on_op(index, started)` brackets every op (the measured trace); may be empty.
  void run(const ScheduleAnalysis& analysis, const std::function<void(uint32_t, bool)>& on_op) {
    std::vector<uint8_t> collective_done(schedule_.collectives.size(), 0);
    std::vector<std::pair<uint64_t, std::unique_ptr<Partial>>> carried;
    for (uint32_t index : analysis.order) {
      const Op& op = schedule_.ops[index];
      if (on_op) on_op(index, true);
      run_op(op, collective_done, carried);
      if (on_op) on_op(index, false);
    }
    collect_outputs();
  }

 private:
  void run_op(const Op& op, std::vector<uint8_t>& collective_done,
              std::vector<std::pair<uint64_t, std::unique_ptr<Partial>>>& carried) {
    {
      switch (op.kind) {
        case OpKind::compute:
          for (const auto& block : schedule_.blocks_of(op)) {
            if (op.pass == Pass::forward) {
              forward_block(partial(local_, op.gpu, {DataKind::O, block.head_group, block.q_chunk}), block);
            } else {
              backward_block(partial(local_, op.gpu, {DataKind::dQ, block.head_group, block.q_chunk}),
                             partial(local_, op.gpu, {DataKind::dKV, block.head_group, block.kv_chunk}), block);
            }
          }
          break;
        case OpKind::send:
          for (const auto& item : schedule_.items_of(op))
            if (carries_data(item)) carried.emplace_back(key(op.peer, item), take(op.gpu, item));
          break;
        case OpKind::recv:
          // The matching send was the op just before (rendezvous order): unload its partials.
          for (auto& [where, value] : carried) fold(inbox_, where, std::move(value));
          carried.clear();
          break;
        case OpKind::collective: {
          auto c = static_cast<size_t>(op.peer);
          if (collective_done[c]) break;
          collective_done[c] = 1;
          for (const auto& transfer : schedule_.collectives[c].transfers)
            for (const auto& item : schedule_.items_of(transfer))
              if (carries_data(item)) fold(inbox_, key(transfer.dst, item), take(transfer.src, item));
          break;
        }
        case OpKind::merge:
          for (const auto& item : schedule_.items_of(op)) {
            if (!carries_data(item)) continue;
            auto it = inbox_.find(key(op.gpu, item));
            if (it == inbox_.end()) continue;
            std::unique_ptr<Partial> arrived = std::move(it->second);
            inbox_.erase(it);
            fold(local_, key(op.gpu, item), std::move(arrived));
          }
          break;
      }
    }
  }

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
    const auto h = static_cast<size_t>(problem_.heads), g = static_cast<size_t>(problem_.kv_heads);
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
  // Folds a partial into store[where]: LSE-weighted for outputs, sums for gradients.
  void fold(Store& store, uint64_t where, std::unique_ptr<Partial> value) {
    auto& slot = store[where];
    if (!slot) {
      slot = std::move(value);
      return;
    }
    Partial& into = *slot;
    for (size_t index = 0; index < value->d_q.size(); ++index) into.d_q[index] += value->d_q[index];
    for (size_t index = 0; index < value->d_k.size(); ++index) into.d_k[index] += value->d_k[index];
    for (size_t index = 0; index < value->d_v.size(); ++index) into.d_v[index] += value->d_v[index];
    const size_t dv = static_cast<size_t>(problem_.head_dim_v);
    for (size_t row_head = 0; row_head < value->lse.size(); ++row_head) {
      float a = into.lse[row_head], b = value->lse[row_head];
      if (b == -std::numeric_limits<float>::infinity()) continue;
      float merged = a == -std::numeric_limits<float>::infinity() ? b : std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
      float wa = a == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(a - merged), wb = std::exp(b - merged);
      for (size_t e = 0; e < dv; ++e)
        into.out[row_head * dv + e] = wa * into.out[row_head * dv + e] + wb * value->out[row_head * dv + e];
      into.lse[row_head] = merged;
    }
  }

  // Query heads of a head group, and the key/value head each one reads.
  std::pair<int64_t, int64_t> heads_of(int32_t head_group) const {
    const int64_t per_group = problem_.heads / schedule_.head_groups;
    return {head_group * per_group, (head_group + 1) * per_group};
  }
  int64_t kv_head_of(int64_t head) const { return head / (problem_.heads / problem_.kv_heads); }
  float scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(problem_.head_dim))); }

  void forward_block(Partial& into, const BlockRef& block) {
    const auto& queries = chunk_tokens_[static_cast<size_t>(block.q_chunk)];
    const auto& keys = chunk_tokens_[static_cast<size_t>(block.kv_chunk)];
    const int64_t H = problem_.heads, G = problem_.kv_heads, d = problem_.head_dim, dv = problem_.head_dim_v;
    auto [first_head, last_head] = heads_of(block.head_group);
    std::vector<float> scores(keys.size());
    std::vector<float> sum(static_cast<size_t>(dv));
    for (size_t row = 0; row < queries.size(); ++row) {
      const int64_t t = queries[row];
      for (int64_t h = first_head; h < last_head; ++h) {
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
        const size_t row_head = row * static_cast<size_t>(H) + static_cast<size_t>(h);
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
    auto [first_head, last_head] = heads_of(block.head_group);
    for (size_t row = 0; row < queries.size(); ++row) {
      const int64_t t = queries[row];
      for (int64_t h = first_head; h < last_head; ++h) {
        const int64_t kvh = kv_head_of(h);
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
            dkv_into.d_v[(col * static_cast<size_t>(G) + static_cast<size_t>(kvh)) * static_cast<size_t>(dv) + static_cast<size_t>(e)] += p * g_out;
          }
          const float ds = p * (dp - delta) * scale();
          for (int64_t e = 0; e < d; ++e) {
            dq_into.d_q[(row * static_cast<size_t>(H) + static_cast<size_t>(h)) * static_cast<size_t>(d) + static_cast<size_t>(e)] +=
                ds * k_[static_cast<size_t>((s * G + kvh) * d + e)];
            dkv_into.d_k[(col * static_cast<size_t>(G) + static_cast<size_t>(kvh)) * static_cast<size_t>(d) + static_cast<size_t>(e)] +=
                ds * q_[static_cast<size_t>((t * H + h) * d + e)];
          }
        }
      }
    }
  }

  void collect_outputs() {
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
        auto [first_head, last_head] = heads_of(hg);
        auto find = [&](DataKind kind) -> const Partial* {
          auto it = local_.find(key(owner, {kind, hg, chunk}));
          return it == local_.end() ? nullptr : it->second.get();
        };
        for (size_t row = 0; row < tokens.size(); ++row) {
          const int64_t t = tokens[row];
          for (int64_t h = first_head; h < last_head; ++h) {
            const size_t row_head = row * static_cast<size_t>(H) + static_cast<size_t>(h);
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
            for (int64_t kvh = 0; kvh < G; ++kvh) {
              for (int64_t e = 0; e < d; ++e)
                tensors_.d_k[static_cast<size_t>((t * G + kvh) * d + e)] +=
                    grad->d_k[(row * static_cast<size_t>(G) + static_cast<size_t>(kvh)) * static_cast<size_t>(d) + static_cast<size_t>(e)];
              for (int64_t e = 0; e < dv; ++e)
                tensors_.d_v[static_cast<size_t>((t * G + kvh) * dv + e)] +=
                    grad->d_v[(row * static_cast<size_t>(G) + static_cast<size_t>(kvh)) * static_cast<size_t>(dv) + static_cast<size_t>(e)];
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
  Store local_, inbox_;
};

}  // namespace

void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors) {
  Interpreter interpreter(checked.schedule(), checked.grid(), tensors);
  interpreter.run(checked.analysis(), {});
}

void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const Schedule& schedule = checked.schedule();
  record.device = "CPU reference interpreter (one rank after another)";
  record.op_start_s.assign(schedule.ops.size(), 0);
  record.op_finish_s.assign(schedule.ops.size(), 0);
  Interpreter interpreter(schedule, checked.grid(), tensors);
  // The interpreter runs ranks one after another: times are those of a serial execution.
  interpreter.run(checked.analysis(), [&](uint32_t index, bool starting) {
    const double now_s = std::chrono::duration<double>(Clock::now() - started).count();
    (starting ? record.op_start_s : record.op_finish_s)[index] = now_s;
  });
  record.makespan_s = 0;
  for (double finish_s : record.op_finish_s) record.makespan_s = std::max(record.makespan_s, finish_s);
  record.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
}

namespace {

class CpuExecutor final : public ScheduleExecutor {
 public:
  std::string name() const override { return "cpu"; }
  Readiness can_run(const schedules::CheckedSchedule& checked) const override {
    const Schedule& schedule = checked.schedule();
    if (schedule.gpus >= (1 << 20) || schedule.chunks() >= (1 << 24) || schedule.head_groups >= (1 << 16))
      return Readiness::unsupported("the CPU executor runs at most 2^20 ranks, 2^24 chunks and 2^16 head groups");
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
  void execute(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record) override {
    execute_on_cpu(checked, tensors, record);
  }
};

}  // namespace

std::unique_ptr<ScheduleExecutor> make_cpu_executor() { return std::make_unique<CpuExecutor>(); }

}  // namespace tessera::backend
