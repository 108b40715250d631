#include "tessera/backend/cuda/cuda_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>

#include "attention_kernels.hpp"
#include "cuda_check.hpp"
#include "cuda_readiness.hpp"
#include "tessera/backend/device_buffers.hpp"
#include "tessera/core/pair_count.hpp"
#include "tessera/core/parallel.hpp"
#include "transport.hpp"
#include "watchdog.hpp"

namespace tessera::backend::cuda {

namespace {

// work(begin, end) over the tokens [0, n) of a chunk, each token `elements_per_token` elements of
// host work: on all cores where the chunk is large (the host packs and unpacks every input and
// output of every execution: a GPU validation step at 32K tokens took over a hundred seconds for
// executions of a third of a second on the GPU), on this thread where it is small.
void for_token_ranges(int64_t n, int64_t elements_per_token, const std::function<void(int64_t, int64_t)>& work) {
#ifdef TESSERA_CUDA_EMULATION
  constexpr int64_t kElementsPerPiece = 256;  // the emulation's small problems take the parallel path too
#else
  constexpr int64_t kElementsPerPiece = int64_t{1} << 20;
#endif
  if (n <= 0) return;
  const int64_t pieces = std::clamp<int64_t>(n * elements_per_token / kElementsPerPiece, 1, std::min<int64_t>(n, 64));
  if (pieces == 1) return work(0, n);
  parallel_for(static_cast<size_t>(pieces), default_threads(), [&](size_t piece) {
    const auto p = static_cast<int64_t>(piece);
    work(n * p / pieces, n * (p + 1) / pieces);
  });
}

ElementType element_of(DType dtype) {
  switch (dtype) {
    case DType::fp32: return ElementType::fp32;
    case DType::bf16: return ElementType::bf16;
    case DType::fp16: return ElementType::fp16;
  }
  return ElementType::bf16;
}

// A device allocation with its size; freed stream-ordered or at the end of the run.
struct Buffer {
  void* data = nullptr;
  int64_t bytes = 0;
  float* floats() const { return static_cast<float*>(data); }
};

// Keeps an NCCL group balanced: an op that fails between its start and end still ends it, so
// later NCCL calls (an abort, a destroy) do not run inside a dangling group.
class GroupScope {
 public:
  GroupScope(DeviceTransport& transport, const std::string& what) : transport_(transport), what_(what) {
    transport_.begin_group();
  }
  void close() {
    open_ = false;
    transport_.end_group(what_);
  }
  ~GroupScope() {
    if (!open_) return;
    try {
      transport_.end_group(what_);
    } catch (...) {  // the error that unwound us is the one to report
    }
  }
  GroupScope(const GroupScope&) = delete;
  GroupScope& operator=(const GroupScope&) = delete;

 private:
  DeviceTransport& transport_;
  std::string what_;
  bool open_ = true;
};

// Everything one run holds on the devices. Destroyed (and freed) when the run ends, also on error.
class Run {
 public:
  Run(const schedules::CheckedSchedule& checked, DeviceTransport& transport, const ExecutorOptions& options)
      : schedule_(checked.schedule()), grid_(checked.grid()), analysis_(checked.analysis()),
        order_(schedules::execution_order(schedule_, analysis_)), problem_(schedule_.problem),
        transport_(transport), options_(options) {}

  ~Run() {
    for (int device : devices_) {
      cudaSetDevice(device);
      cudaDeviceSynchronize();
    }
    for (auto* store : {&inputs_, &local_, &inbox_})
      for (auto& [key, buffer] : *store) cudaFree(buffer.data);
    for (void* data : scratch_) cudaFree(data);
    for (auto& [device, tokens] : tokens_)
      for (auto& data : tokens) cudaFree(data);
    for (auto& [device, documents] : documents_) cudaFree(documents);
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
    for (auto& [key, stream] : streams_) cudaStreamDestroy(stream);
  }

  void execute(AttentionTensors& tensors, ExecutionRecord& record) {
    for (int32_t rank = 0; rank < schedule_.gpus; ++rank) {
      if (!transport_.drives(rank)) continue;
      const int device = transport_.device_of(rank);
      if (std::find(devices_.begin(), devices_.end(), device) == devices_.end()) devices_.push_back(device);
    }
    keep_pool_memory();
    upload_positions();
    upload_inputs(tensors);
    create_op_events();
    for (int device : devices_) {
      check_cuda(cudaSetDevice(device), "selecting GPU " + std::to_string(device));
      check_cuda(cudaDeviceSynchronize(), "uploading the inputs");
    }
    transport_.barrier();  // processes start their clocks together (as nearly as MPI allows)
    for (int device : devices_) {
      check_cuda(cudaSetDevice(device), "selecting GPU " + std::to_string(device));
      cudaEvent_t origin = new_event(true);
      check_cuda(cudaEventRecord(origin, stream_for(device_origin_rank(device), -1)), "recording the start");
      origin_[device] = origin;
    }
    {
      Watchdog watchdog(transport_, options_.watchdog_s);
      try {
        const auto issuing_from = std::chrono::steady_clock::now();
        for (uint32_t index : order_)
          if (transport_.drives(schedule_.ops[index].gpu)) {
            watchdog.progress(index);
            issue(index);
          }
        record.host_issue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - issuing_from).count();
        wait_for_completion(watchdog);
      } catch (const std::exception& error) {
        if (!watchdog.fired()) throw;
        // The watchdog aborted the communicators; the failure that followed is its doing.
        throw CudaError("watchdog: no progress for " + std::to_string(static_cast<int>(watchdog.limit_s())) +
                        " s; waiting for " + schedule_.describe(schedule_.ops[watchdog.op_waited_on()]) + " (then: " +
                        error.what() + ")");
      }
    }
    record_times(record);
    download_outputs(tensors);
  }

 private:
  // The stream-ordered allocator's pool gives its memory back to the driver at every
  // synchronisation by default, so the first allocations of each run (each calibration run, each
  // execution validate times) had to map fresh memory while ops were being issued: host time,
  // hundreds of microseconds, that the op's events counted. Kept, a pool grows once per process.
  void keep_pool_memory() {
    for (int device : devices_) {
      cudaMemPool_t pool = nullptr;
      check_cuda(cudaDeviceGetDefaultMemPool(&pool, device), "reading GPU " + std::to_string(device) + "'s memory pool");
      uint64_t keep_bytes = std::numeric_limits<uint64_t>::max();
      check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_bytes),
                 "keeping GPU " + std::to_string(device) + "'s memory pool");
    }
  }

  // --- streams and events ----------------------------------------------------------------
  int32_t device_origin_rank(int device) const {
    for (int32_t rank = 0; rank < schedule_.gpus; ++rank)
      if (transport_.drives(rank) && transport_.device_of(rank) == device) return rank;
    return 0;
  }
  void select(int32_t rank) { check_cuda(cudaSetDevice(transport_.device_of(rank)), "selecting the GPU of rank " + std::to_string(rank)); }
  cudaStream_t stream_for(int32_t rank, int32_t stream) {
    auto& slot = streams_[{rank, stream}];
    if (!slot) {
      select(rank);
      check_cuda(cudaStreamCreateWithFlags(&slot, cudaStreamNonBlocking), "creating a stream for rank " + std::to_string(rank));
    }
    return slot;
  }
  cudaStream_t stream_of(uint32_t op) { return stream_for(schedule_.ops[op].gpu, schedule_.ops[op].stream); }
  cudaEvent_t new_event(bool timing) {
    cudaEvent_t event = nullptr;
    check_cuda(cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming), "creating an event");
    events_.push_back(event);
    return event;
  }
  void create_op_events() {
    start_.resize(schedule_.ops.size());
    end_.resize(schedule_.ops.size());
    for (size_t index = 0; index < schedule_.ops.size(); ++index) {
      if (!transport_.drives(schedule_.ops[index].gpu)) continue;
      select(schedule_.ops[index].gpu);
      start_[index] = new_event(true);
      end_[index] = new_event(true);
    }
  }

  // --- buffers -----------------------------------------------------------------------------
  // Buffers are found by (rank, item): kind in 8 bits, head group 16, rank 20, chunk 20 (the
  // constructor refuses schedules beyond these).
  static uint64_t key(int32_t rank, const DataItem& item) {
    return (static_cast<uint64_t>(item.kind) << 56) | (static_cast<uint64_t>(item.head_group) << 40) |
           (static_cast<uint64_t>(rank) << 20) | static_cast<uint64_t>(item.chunk);
  }
  Buffer allocate(int32_t rank, int64_t bytes, cudaStream_t stream, const std::string& what) {
    select(rank);
    Buffer buffer;
    buffer.bytes = bytes;
    check_cuda(cudaMallocAsync(&buffer.data, static_cast<size_t>(std::max<int64_t>(bytes, 4)), stream), what);
    return buffer;
  }
  // A fresh accumulator: O = 0 with LSE = -infinity, gradients = 0.
  Buffer empty_partial(int32_t rank, const DataItem& item, cudaStream_t stream, const std::string& what) {
    Buffer buffer = allocate(rank, device_item_bytes(schedule_, grid_, item), stream, what);
    check_cuda(cudaMemsetAsync(buffer.data, 0, static_cast<size_t>(buffer.bytes), stream), what);
    if (item.kind == DataKind::O) {
      const int64_t row_heads = rows(item.chunk) * query_heads_per_group(problem_, schedule_.head_groups);
      check_cuda(launch_fill(buffer.floats() + row_heads * problem_.head_dim_v, -std::numeric_limits<float>::infinity(),
                             row_heads, stream),
                 what);
    }
    return buffer;
  }
  Buffer& partial(int32_t rank, const DataItem& item, cudaStream_t stream, const std::string& what) {
    auto it = local_.find(key(rank, item));
    if (it == local_.end()) it = local_.emplace(key(rank, item), empty_partial(rank, item, stream, what)).first;
    return it->second;
  }
  const Buffer& input(int32_t rank, const DataItem& item, const std::string& what) const {
    auto it = inputs_.find(key(rank, item));
    if (it == inputs_.end()) throw CudaError(what + ": " + to_string(item) + " is not on GPU " + std::to_string(rank));
    return it->second;
  }
  // Folds `arrived` into store[where] on `stream`: LSE-weighted for O, sums for gradients.
  void fold(std::unordered_map<uint64_t, Buffer>& store, uint64_t where, const DataItem& item, Buffer arrived,
            cudaStream_t stream, const std::string& what) {
    auto it = store.find(where);
    if (it == store.end()) {
      store.emplace(where, arrived);
      return;
    }
    if (item.kind == DataKind::O)
      check_cuda(launch_merge_outputs(it->second.floats(), arrived.floats(),
                                      rows(item.chunk) * query_heads_per_group(problem_, schedule_.head_groups),
                                      static_cast<int32_t>(problem_.head_dim_v), stream),
                 what);
    else
      check_cuda(launch_add(it->second.floats(), arrived.floats(), arrived.bytes / 4, stream), what);
    check_cuda(cudaFreeAsync(arrived.data, stream), what);
  }
  int64_t rows(int32_t chunk) const { return grid_.chunk_tokens(chunk); }

  // --- uploads -------------------------------------------------------------------------------
  template <typename T>
  T* upload(const std::vector<T>& values, const std::string& what) {
    void* data = nullptr;
    check_cuda(cudaMalloc(&data, std::max<size_t>(values.size() * sizeof(T), 4)), what);
    check_cuda(cudaMemcpy(data, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), what);
    return static_cast<T*>(data);
  }
  void upload_positions() {
    for (int device : devices_) {
      check_cuda(cudaSetDevice(device), "selecting GPU " + std::to_string(device));
      auto& tokens = tokens_[device];
      for (int32_t chunk = 0; chunk < schedule_.chunks(); ++chunk)
        tokens.push_back(upload(chunk_token_list(grid_, chunk), "uploading token positions"));
      if (problem_.mask.kind == MaskKind::documents) {
        DocumentBounds bounds(problem_.mask.document_lengths);
        std::vector<int32_t> document(static_cast<size_t>(problem_.seq_len));
        for (int64_t token = 0; token < problem_.seq_len; ++token)
          document[static_cast<size_t>(token)] = static_cast<int32_t>(bounds.document_of(token));
        documents_[device] = upload(document, "uploading document bounds");
      }
    }
  }
  // One input item of chunk `chunk`, head group `group`, packed as device_buffers.hpp lays it out.
  // Every element's place is computed, so that the chunk's tokens are packed on all cores
  // (for_token_ranges): at 32K tokens and 32 heads one execution packs half a billion elements.
  std::vector<float> pack(const AttentionTensors& t, const DataItem& item) const {
    const int64_t H = problem_.heads, G = problem_.kv_heads, d = problem_.head_dim, dv = problem_.head_dim_v;
    const int64_t hg = query_heads_per_group(problem_, schedule_.head_groups);
    const int64_t gg = kv_heads_per_group(problem_, schedule_.head_groups);
    const int64_t first_head = item.head_group * hg;
    const int64_t first_kv = first_kv_head_of_group(problem_, schedule_.head_groups, item.head_group);
    const std::vector<int64_t> tokens = chunk_token_list(grid_, item.chunk);
    const auto n = static_cast<int64_t>(tokens.size());
    const DType dtype = problem_.dtype;
    auto rounded = [dtype](double value) { return static_cast<float>(round_to_dtype(dtype, value)); };
    const int64_t per_token = item.kind == DataKind::Q      ? hg * d
                              : item.kind == DataKind::KV   ? gg * (d + dv)
                              : item.kind == DataKind::dO   ? hg * dv
                              : item.kind == DataKind::Stats ? 2 * hg
                                                             : 0;
    std::vector<float> packed(static_cast<size_t>(n * per_token));
    float* const out = packed.data();
    auto at = [](const std::vector<double>& values, int64_t index) { return values[static_cast<size_t>(index)]; };
    for_token_ranges(n, per_token, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t token = tokens[static_cast<size_t>(r)];
        switch (item.kind) {
          case DataKind::Q:
            for (int64_t h = 0; h < hg; ++h)
              for (int64_t e = 0; e < d; ++e) out[(r * hg + h) * d + e] = rounded(at(t.q, (token * H + first_head + h) * d + e));
            break;
          case DataKind::KV:  // K of every token, then V of every token
            for (int64_t g = 0; g < gg; ++g) {
              for (int64_t e = 0; e < d; ++e) out[(r * gg + g) * d + e] = rounded(at(t.k, (token * G + first_kv + g) * d + e));
              for (int64_t e = 0; e < dv; ++e)
                out[n * gg * d + (r * gg + g) * dv + e] = rounded(at(t.v, (token * G + first_kv + g) * dv + e));
            }
            break;
          case DataKind::dO:
            for (int64_t h = 0; h < hg; ++h)
              for (int64_t e = 0; e < dv; ++e)
                out[(r * hg + h) * dv + e] = rounded(at(t.d_out, (token * H + first_head + h) * dv + e));
            break;
          case DataKind::Stats:
            // The forward's LSE, then delta = rowsum(dO * O), formed by the owner as the CPU executor does.
            for (int64_t h = 0; h < hg; ++h) {
              const int64_t row_head = token * H + first_head + h;
              out[r * hg + h] = static_cast<float>(at(t.lse, row_head));
              double sum = 0;
              for (int64_t e = 0; e < dv; ++e)
                sum += static_cast<double>(rounded(at(t.d_out, row_head * dv + e))) * static_cast<float>(at(t.out, row_head * dv + e));
              out[n * hg + r * hg + h] = static_cast<float>(sum);
            }
            break;
          default: break;
        }
      }
    });
    return packed;
  }
  void upload_inputs(const AttentionTensors& tensors) {
    std::vector<DataKind> kinds = {DataKind::Q, DataKind::KV};
    if (problem_.has_backward()) kinds.insert(kinds.end(), {DataKind::dO, DataKind::Stats});
    const ElementType element = element_of(problem_.dtype);
    for (int32_t chunk = 0; chunk < schedule_.chunks(); ++chunk)
      for (int32_t group = 0; group < schedule_.head_groups; ++group)
        for (DataKind kind : kinds) {
          const DataItem item{kind, group, chunk};
          const int32_t owner = schedule_.owner(chunk);
          if (!transport_.drives(owner)) continue;
          const std::string what = "uploading " + to_string(item) + " to GPU " + std::to_string(owner);
          select(owner);
          const std::vector<float> packed = pack(tensors, item);
          float* staging = upload(packed, what);
          Buffer buffer;
          buffer.bytes = device_item_bytes(schedule_, grid_, item);
          check_cuda(cudaMalloc(&buffer.data, static_cast<size_t>(std::max<int64_t>(buffer.bytes, 4))), what);
          if (kind == DataKind::Stats)
            check_cuda(cudaMemcpy(buffer.data, staging, packed.size() * 4, cudaMemcpyDeviceToDevice), what);
          else
            check_cuda(launch_convert(buffer.data, element, staging, static_cast<int64_t>(packed.size()), nullptr), what);
          check_cuda(cudaDeviceSynchronize(), what);
          cudaFree(staging);
          inputs_[key(owner, item)] = buffer;
        }
  }

  // --- issuing ops -----------------------------------------------------------------------------
  void issue(uint32_t index) {
    const Op& op = schedule_.ops[index];
    const std::string what = schedule_.describe(op);
    cudaStream_t stream = stream_of(index);
    select(op.gpu);
    // Waits only across streams: ops of one stream are already ordered.
    for (uint32_t dep : analysis_.deps_of(index)) {
      const Op& before = schedule_.ops[dep];
      if (before.gpu != op.gpu || before.stream != op.stream) check_cuda(cudaStreamWaitEvent(stream, end_[dep], 0), what);
    }
    check_cuda(cudaEventRecord(start_[index], stream), what);
    switch (op.kind) {
      case OpKind::compute:
        for (const BlockRef& block : schedule_.blocks_of(op)) compute_block(op, block, stream, what);
        check_cuda(cudaEventRecord(end_[index], stream), what);
        break;
      case OpKind::merge:
        for (const DataItem& item : schedule_.items_of(op)) {
          if (!is_accumulator(item.kind) || item.kind == DataKind::LSE) continue;
          auto it = inbox_.find(key(op.gpu, item));
          if (it == inbox_.end()) continue;
          Buffer arrived = it->second;
          inbox_.erase(it);
          fold(local_, key(op.gpu, item), item, arrived, stream, what);
        }
        check_cuda(cudaEventRecord(end_[index], stream), what);
        break;
      case OpKind::send:
      case OpKind::recv: {
        // The pair moves data when its second op is issued (both have reached it: rendezvous).
        const auto partner = static_cast<uint32_t>(analysis_.partner[index]);
        if (!transport_.drives(schedule_.ops[partner].gpu)) {
          half_transfer(index, what);  // the peer's process issues the other half
          break;
        }
        if (!reached_[partner]) {
          reached_[index] = 1;
          break;
        }
        const uint32_t send = op.kind == OpKind::send ? index : partner;
        const uint32_t recv = op.kind == OpKind::send ? partner : index;
        transfer_pairs({{send, recv, schedule_.items_of(schedule_.ops[send])}}, what);
        break;
      }
      case OpKind::collective: {
        const auto c = static_cast<size_t>(op.peer);
        const auto& members = analysis_.collective_ops[c];
        const bool drives_all = std::all_of(members.begin(), members.end(),
                                            [&](uint32_t member) { return transport_.drives(schedule_.ops[member].gpu); });
        if (!drives_all) {
          collective_half(index, c, what);
          break;
        }
        if (++collective_arrivals_[c] < members.size()) break;
        std::map<int32_t, uint32_t> op_of_rank;
        for (uint32_t member : members) op_of_rank[schedule_.ops[member].gpu] = member;
        std::vector<Pair> pairs;
        for (const Transfer& transfer : schedule_.collectives[c].transfers)
          pairs.push_back({op_of_rank.at(transfer.src), op_of_rank.at(transfer.dst), schedule_.items_of(transfer)});
        transfer_pairs(pairs, what, members);
        break;
      }
    }
  }

  void compute_block(const Op& op, const BlockRef& block, cudaStream_t stream, const std::string& what) {
    const int32_t rank = op.gpu;
    const int device = transport_.device_of(rank);
    BlockShape shape;
    shape.q_rows = static_cast<int32_t>(rows(block.q_chunk));
    shape.kv_rows = static_cast<int32_t>(rows(block.kv_chunk));
    shape.heads = static_cast<int32_t>(query_heads_per_group(problem_, schedule_.head_groups));
    shape.kv_heads = static_cast<int32_t>(kv_heads_per_group(problem_, schedule_.head_groups));
    shape.head_dim = static_cast<int32_t>(problem_.head_dim);
    shape.head_dim_v = static_cast<int32_t>(problem_.head_dim_v);
    shape.first_head = block.head_group * shape.heads;
    shape.first_kv_head = static_cast<int32_t>(first_kv_head_of_group(problem_, schedule_.head_groups, block.head_group));
    shape.heads_per_kv = static_cast<int32_t>(problem_.heads / problem_.kv_heads);
    shape.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(problem_.head_dim)));
    MaskArgs mask;
    mask.kind = static_cast<int>(problem_.mask.kind == MaskKind::full ? 0
                                 : problem_.mask.kind == MaskKind::causal ? 1
                                 : problem_.mask.kind == MaskKind::sliding_window ? 2 : 3);
    mask.window_tokens = problem_.mask.window_tokens;
    if (problem_.mask.kind == MaskKind::documents) mask.document_of_token = documents_.at(device);
    const auto& tokens = tokens_.at(device);
    if (op.pass == Pass::forward) {
      ForwardArgs args;
      args.shape = shape;
      args.mask = mask;
      args.element = element_of(problem_.dtype);
      args.q = input(rank, {DataKind::Q, block.head_group, block.q_chunk}, what).data;
      args.kv = input(rank, {DataKind::KV, block.head_group, block.kv_chunk}, what).data;
      args.q_tokens = tokens[static_cast<size_t>(block.q_chunk)];
      args.kv_tokens = tokens[static_cast<size_t>(block.kv_chunk)];
      args.out = partial(rank, {DataKind::O, block.head_group, block.q_chunk}, stream, what).floats();
      check_cuda(launch_forward_block(args, stream), what + ", block " + to_string(block));
    } else {
      BackwardArgs args;
      args.shape = shape;
      args.mask = mask;
      args.element = element_of(problem_.dtype);
      args.q = input(rank, {DataKind::Q, block.head_group, block.q_chunk}, what).data;
      args.kv = input(rank, {DataKind::KV, block.head_group, block.kv_chunk}, what).data;
      args.d_out = input(rank, {DataKind::dO, block.head_group, block.q_chunk}, what).data;
      args.stats = static_cast<const float*>(input(rank, {DataKind::Stats, block.head_group, block.q_chunk}, what).data);
      args.q_tokens = tokens[static_cast<size_t>(block.q_chunk)];
      args.kv_tokens = tokens[static_cast<size_t>(block.kv_chunk)];
      args.d_q = partial(rank, {DataKind::dQ, block.head_group, block.q_chunk}, stream, what).floats();
      args.d_kv = partial(rank, {DataKind::dKV, block.head_group, block.kv_chunk}, stream, what).floats();
      check_cuda(launch_backward_block(args, stream), what + ", block " + to_string(block));
    }
  }

  struct Pair {
    uint32_t send_op, recv_op;
    std::span<const DataItem> items;
  };
  // Moves the items of every pair as one transport group, then completes all ops involved
  // together: each op's stream waits for every arrival before its end event.
  void transfer_pairs(const std::vector<Pair>& pairs, const std::string& what, std::vector<uint32_t> ops = {}) {
    struct Arrival {
      int32_t rank;
      cudaStream_t stream;
      uint64_t where;
      DataItem item;
      Buffer buffer;
    };
    std::vector<Arrival> arrivals;
    std::vector<std::pair<uint32_t, Buffer>> moved;  // accumulators leaving their sender
    if (ops.empty())
      for (const Pair& pair : pairs) ops.insert(ops.end(), {pair.send_op, pair.recv_op});
    GroupScope group(transport_, what);
    for (const Pair& pair : pairs) {
      const Op& send = schedule_.ops[pair.send_op];
      const Op& recv = schedule_.ops[pair.recv_op];
      const int32_t from = send.gpu, to = recv.gpu;
      cudaStream_t from_stream = stream_of(pair.send_op), to_stream = stream_of(pair.recv_op);
      for (const DataItem& item : pair.items) {
        if (item.kind == DataKind::LSE) continue;  // travels with its O
        Buffer source;
        if (is_accumulator(item.kind)) {
          auto it = local_.find(key(from, item));
          if (it == local_.end()) {
            source = empty_partial(from, item, from_stream, what);
          } else {
            source = it->second;
            local_.erase(it);
          }
          moved.emplace_back(pair.send_op, source);
        } else {
          source = input(from, item, what);
        }
        Buffer target = allocate(to, source.bytes, to_stream, what);
        transport_.copy({from, transport_.device_of(from), from_stream, source.data},
                        {to, transport_.device_of(to), to_stream, target.data}, static_cast<size_t>(source.bytes),
                        what + ", " + to_string(item));
        if (is_accumulator(item.kind)) {
          arrivals.push_back({to, to_stream, key(to, item), item, target});
        } else if (!inputs_.emplace(key(to, item), target).second) {
          scratch_.push_back(target.data);  // already held: the copy only completes the match
        }
      }
    }
    group.close();
    for (Arrival& arrival : arrivals) {
      select(arrival.rank);
      fold(inbox_, arrival.where, arrival.item, arrival.buffer, arrival.stream, what);
    }
    // Rendezvous: every op of the group ends when all of the group's data has arrived.
    std::vector<cudaEvent_t> arrived;
    for (uint32_t op : ops) {
      select(schedule_.ops[op].gpu);
      cudaEvent_t event = new_event(false);
      check_cuda(cudaEventRecord(event, stream_of(op)), what);
      arrived.push_back(event);
    }
    for (uint32_t op : ops) {
      select(schedule_.ops[op].gpu);
      for (cudaEvent_t event : arrived) check_cuda(cudaStreamWaitEvent(stream_of(op), event, 0), what);
      for (auto& [send_op, buffer] : moved)
        if (send_op == op) check_cuda(cudaFreeAsync(buffer.data, stream_of(op)), what);
      check_cuda(cudaEventRecord(end_[op], stream_of(op)), what);
    }
  }

  // One process's side of transfers whose peers other processes drive (the mpi transport):
  // sends of the items `op` sends to each peer and receives of those it gets, as one group.
  struct Half {
    int32_t peer;
    bool sending;
    std::span<const DataItem> items;
  };
  void half_transfers(uint32_t index, const std::vector<Half>& halves, const std::string& what) {
    const Op& op = schedule_.ops[index];
    cudaStream_t stream = stream_of(index);
    const Endpoint self{op.gpu, transport_.device_of(op.gpu), stream, nullptr};
    std::vector<Buffer> moved;
    struct Arrival {
      DataItem item;
      Buffer buffer;
    };
    std::vector<Arrival> arrivals;
    GroupScope group(transport_, what);
    for (const Half& half : halves)
      for (const DataItem& item : half.items) {
        if (item.kind == DataKind::LSE) continue;
        Endpoint end = self;
        if (half.sending) {
          Buffer source;
          if (is_accumulator(item.kind)) {
            auto it = local_.find(key(op.gpu, item));
            if (it == local_.end()) {
              source = empty_partial(op.gpu, item, stream, what);
            } else {
              source = it->second;
              local_.erase(it);
            }
            moved.push_back(source);
          } else {
            source = input(op.gpu, item, what);
          }
          end.data = source.data;
          transport_.send(end, half.peer, static_cast<size_t>(source.bytes), what + ", " + to_string(item));
        } else {
          Buffer target = allocate(op.gpu, device_item_bytes(schedule_, grid_, item), stream, what);
          end.data = target.data;
          transport_.recv(end, half.peer, static_cast<size_t>(target.bytes), what + ", " + to_string(item));
          if (is_accumulator(item.kind))
            arrivals.push_back({item, target});
          else if (!inputs_.emplace(key(op.gpu, item), target).second)
            scratch_.push_back(target.data);
        }
      }
    group.close();
    for (Arrival& arrival : arrivals) fold(inbox_, key(op.gpu, arrival.item), arrival.item, arrival.buffer, stream, what);
    for (Buffer& buffer : moved) check_cuda(cudaFreeAsync(buffer.data, stream), what);
    check_cuda(cudaEventRecord(end_[index], stream), what);
  }
  void half_transfer(uint32_t index, const std::string& what) {
    const Op& op = schedule_.ops[index];
    half_transfers(index, {{op.peer, op.kind == OpKind::send, schedule_.items_of(op)}}, what);
  }
  void collective_half(uint32_t index, size_t collective, const std::string& what) {
    const int32_t rank = schedule_.ops[index].gpu;
    std::vector<Half> halves;
    for (const Transfer& transfer : schedule_.collectives[collective].transfers) {
      if (transfer.src == rank) halves.push_back({transfer.dst, true, schedule_.items_of(transfer)});
      if (transfer.dst == rank) halves.push_back({transfer.src, false, schedule_.items_of(transfer)});
    }
    half_transfers(index, halves, what);
  }

  // --- completion ------------------------------------------------------------------------------
  // Waits for every op this process issued, in execution order, telling the watchdog which op
  // is awaited and polling for CUDA and background NCCL errors.
  void wait_for_completion(Watchdog& watchdog) {
    for (uint32_t index : order_) {
      if (!transport_.drives(schedule_.ops[index].gpu)) continue;
      watchdog.progress(index);  // a new op awaited: the clock starts again
      if (cudaEventQuery(end_[index]) == cudaSuccess) continue;
      const std::string what = schedule_.describe(schedule_.ops[index]);
      for (;;) {
        const cudaError_t status = cudaEventQuery(end_[index]);
        if (status == cudaSuccess) break;
        if (status != cudaErrorNotReady) check_cuda(status, what);
        if (watchdog.fired()) throw CudaError("the watchdog aborted the run");  // the caller names the op
        transport_.check_async_errors(what);
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    for (int device : devices_) {
      check_cuda(cudaSetDevice(device), "selecting GPU " + std::to_string(device));
      check_cuda(cudaDeviceSynchronize(), "finishing the run");
    }
  }

  void record_times(ExecutionRecord& record) {
    record.op_start_s.assign(schedule_.ops.size(), 0);
    record.op_finish_s.assign(schedule_.ops.size(), 0);
    record.makespan_s = 0;
    for (size_t index = 0; index < schedule_.ops.size(); ++index) {
      if (!transport_.drives(schedule_.ops[index].gpu)) continue;
      cudaEvent_t origin = origin_.at(transport_.device_of(schedule_.ops[index].gpu));
      float start_ms = 0, finish_ms = 0;
      check_cuda(cudaEventElapsedTime(&start_ms, origin, start_[index]), "reading op times");
      check_cuda(cudaEventElapsedTime(&finish_ms, origin, end_[index]), "reading op times");
      record.op_start_s[index] = start_ms * 1e-3;
      record.op_finish_s[index] = finish_ms * 1e-3;
    }
    // Under MPI each process timed its own rank's ops: gather them on process 0.
    transport_.combine(record.op_start_s);
    transport_.combine(record.op_finish_s);
    for (double finish_s : record.op_finish_s) record.makespan_s = std::max(record.makespan_s, finish_s);
    record.reporting = transport_.reporting();
  }

  std::vector<float> download(int32_t rank, const DataItem& item) {
    std::vector<float> values;
    auto it = local_.find(key(rank, item));
    if (it == local_.end()) return values;
    select(rank);
    values.resize(static_cast<size_t>(it->second.bytes / 4));
    check_cuda(cudaMemcpy(values.data(), it->second.data, static_cast<size_t>(it->second.bytes), cudaMemcpyDeviceToHost),
               "downloading " + to_string(item) + " from GPU " + std::to_string(rank));
    return values;
  }

  void download_outputs(AttentionTensors& t) {
    const int64_t N = t.tokens, H = problem_.heads, G = problem_.kv_heads, d = problem_.head_dim, dv = problem_.head_dim_v;
    const int64_t hg = query_heads_per_group(problem_, schedule_.head_groups);
    const int64_t gg = kv_heads_per_group(problem_, schedule_.head_groups);
    if (problem_.has_forward()) {
      t.out.assign(static_cast<size_t>(N * H * dv), 0);
      t.lse.assign(static_cast<size_t>(N * H), 0);
    }
    if (problem_.has_backward()) {
      t.d_q.assign(static_cast<size_t>(N * H * d), 0);
      t.d_k.assign(static_cast<size_t>(N * G * d), 0);
      t.d_v.assign(static_cast<size_t>(N * G * dv), 0);
    }
    for (int32_t chunk = 0; chunk < schedule_.chunks(); ++chunk) {
      const std::vector<int64_t> tokens = chunk_token_list(grid_, chunk);
      const auto n = static_cast<int64_t>(tokens.size());
      const int32_t owner = schedule_.owner(chunk);
      if (!transport_.drives(owner)) continue;  // another process holds it (combined below)
      for (int32_t group = 0; group < schedule_.head_groups; ++group) {
        const int64_t first_head = group * hg;
        const int64_t first_kv = first_kv_head_of_group(problem_, schedule_.head_groups, group);
        const std::vector<float> out = download(owner, {DataKind::O, group, chunk});
        const std::vector<float> d_q = download(owner, {DataKind::dQ, group, chunk});
        const std::vector<float> d_kv = download(owner, {DataKind::dKV, group, chunk});
        // A chunk's tokens are distinct, so its rows are unpacked on all cores; the head groups
        // one after another, as replicated KV heads of several groups add into the same rows.
        for_token_ranges(n, hg * (dv + d) + gg * (d + dv), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t token = tokens[static_cast<size_t>(r)];
            for (int64_t h = 0; h < hg; ++h) {
              const int64_t local = r * hg + h, global = token * H + first_head + h;
              if (!out.empty()) {
                t.lse[static_cast<size_t>(global)] = out[static_cast<size_t>(n * hg * dv + local)];
                for (int64_t e = 0; e < dv; ++e)
                  t.out[static_cast<size_t>(global * dv + e)] = out[static_cast<size_t>(local * dv + e)];
              }
              if (!d_q.empty())
                for (int64_t e = 0; e < d; ++e) t.d_q[static_cast<size_t>(global * d + e)] = d_q[static_cast<size_t>(local * d + e)];
            }
            if (!d_kv.empty())
              for (int64_t g = 0; g < gg; ++g) {
                const int64_t local = r * gg + g, global = token * G + first_kv + g;
                for (int64_t e = 0; e < d; ++e)
                  t.d_k[static_cast<size_t>(global * d + e)] += d_kv[static_cast<size_t>(local * d + e)];
                for (int64_t e = 0; e < dv; ++e)
                  t.d_v[static_cast<size_t>(global * dv + e)] += d_kv[static_cast<size_t>(n * gg * d + local * dv + e)];
              }
          }
        });
      }
    }
    // Only what this run produced is summed over processes (a backward run's O and LSE are the
    // caller's inputs, the same in every process).
    if (problem_.has_forward())
      for (auto* values : {&t.out, &t.lse}) transport_.combine(*values);
    if (problem_.has_backward())
      for (auto* values : {&t.d_q, &t.d_k, &t.d_v}) transport_.combine(*values);
  }

  const Schedule& schedule_;
  const BlockGrid& grid_;
  const schedules::ScheduleAnalysis& analysis_;
  const std::vector<uint32_t> order_;  // the ops in an execution order, the order they are issued in
  const Problem& problem_;
  DeviceTransport& transport_;
  const ExecutorOptions& options_;
  std::vector<int> devices_;
  std::map<std::pair<int32_t, int32_t>, cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_, start_, end_;
  std::map<int, cudaEvent_t> origin_;
  std::map<int, std::vector<int64_t*>> tokens_;
  std::map<int, int32_t*> documents_;
  std::unordered_map<uint64_t, Buffer> inputs_, local_, inbox_;
  std::vector<void*> scratch_;
  std::vector<uint8_t> reached_ = std::vector<uint8_t>(schedule_.ops.size(), 0);
  std::vector<size_t> collective_arrivals_ = std::vector<size_t>(schedule_.collectives.size(), 0);
};

int32_t first_driven_rank(const Schedule& schedule, const DeviceTransport& transport) {
  for (int32_t rank = 0; rank < schedule.gpus; ++rank)
    if (transport.drives(rank)) return rank;
  return 0;
}

class CudaExecutor final : public ScheduleExecutor {
 public:
  CudaExecutor(const ExecutorOptions& options, int devices) : options_(options), devices_(devices) {}
  std::string name() const override { return "cuda/" + to_string(options_.transport); }

  Readiness can_run(const schedules::CheckedSchedule& checked) const override {
    return cuda_readiness(checked, options_, devices_);
  }

  void execute(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record) override {
    const auto started = std::chrono::steady_clock::now();
    const Schedule& schedule = checked.schedule();
    std::unique_ptr<DeviceTransport> transport;
    switch (options_.transport) {
      case Transport::local: transport = make_local_transport(); break;
      case Transport::nccl: transport = make_nccl_transport(schedule.gpus); break;
      case Transport::mpi: transport = make_mpi_transport(schedule.gpus); break;
    }
    // The GPU current now (the process's own under MPI) is current again afterwards, so the
    // next run, e.g. a local one, starts from it and not from whichever GPU this run used last.
    const CurrentDeviceScope keep_device;
    // The run lives outside the try so that a failure is reported before ~Run waits for this
    // process's GPUs: under MPI the peers are then stopped at once.
    std::optional<Run> run;
    try {
      cudaDeviceProp properties{};
      check_cuda(cudaGetDeviceProperties(&properties, transport->device_of(first_driven_rank(schedule, *transport))),
                 "reading the GPU's properties");
      record.device = std::string(properties.name) + " x" +
                      std::to_string(options_.transport == Transport::local ? 1 : schedule.gpus) + ", " + transport->name();
      run.emplace(checked, *transport, options_);
      run->execute(tensors, record);
    } catch (const std::exception& error) {
      transport->fail_everywhere(error.what());  // returns only where the caller may report it
      throw;
    }
    record.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

 private:
  ExecutorOptions options_;
  int devices_;
};

}  // namespace

std::unique_ptr<ScheduleExecutor> make_cuda_executor(const ExecutorOptions& options) {
  const int devices = cuda_device_count();
  if (devices == 0) throw BackendUnavailable("no CUDA GPU was found on this machine (cudaGetDeviceCount reports none)");
  return std::make_unique<CudaExecutor>(options, devices);
}

}  // namespace tessera::backend::cuda
