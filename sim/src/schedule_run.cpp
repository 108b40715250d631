#include "schedule_run.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tessera/sim/collective_expansion.hpp"

namespace tessera::sim {

namespace {
EngineOptions engine_options(const SimOptions& options, std::vector<int32_t> resource_representative) {
  EngineOptions engine;
  engine.resource_representative = std::move(resource_representative);
  engine.fidelity = options.fidelity;
  engine.message_costs = options.message_costs();
  engine.channels = options.channels;
  engine.cancel = options.cancel;
  engine.sharing = options.device_sharing ? &*options.device_sharing : nullptr;
  return engine;
}
}  // namespace

ScheduleRun::ScheduleRun(const schedules::CheckedSchedule& checked, const topo::Topology& topology,
                         std::span<const int32_t> placement, const GpuProfile& gpu, const SimOptions& options,
                         SimResult& result, std::vector<int32_t> resource_representative)
    : schedule_(checked.schedule()),
      grid_(checked.grid()),
      analysis_(checked.analysis()),
      successors_(schedules::reverse_dependencies(analysis_)),
      gpu_(gpu),
      options_(options),
      result_(result),
      engine_(topology, std::vector<int32_t>(placement.begin(), placement.begin() + checked.schedule().gpus),
              engine_options(options, std::move(resource_representative)), *this),
      pending_(schedule_.ops.size()),
      posted_(schedule_.ops.size(), 0),
      arrived_members_(schedule_.collectives.size(), 0),
      in_flight_(static_cast<size_t>(schedule_.gpus), 0),
      busy_since_s_(static_cast<size_t>(schedule_.gpus), 0) {
  for (size_t op = 0; op < pending_.size(); ++op) pending_[op] = static_cast<uint32_t>(analysis_.deps_of(op).size());
}

void ScheduleRun::run() {
  for (uint32_t op = 0; op < pending_.size(); ++op)
    if (pending_[op] == 0) ready_.push_back(op);
  engine_.run();
}

// Launch everything ready at this instant, in FIFO order (launching may make more ready).
void ScheduleRun::before_next_event() {
  for (size_t next = 0; next < ready_.size(); ++next) launch(ready_[next]);
  ready_.clear();
}

void ScheduleRun::launch(uint32_t index) {
  const Op& op = schedule_.ops[index];
  result_.op_start_s[index] = engine_.now_s();
  posted_[index] = 1;
  switch (op.kind) {
    case OpKind::compute:
    case OpKind::merge: {
      const double seconds = compute_s(op);
      result_.gpus[static_cast<size_t>(op.gpu)].compute_s += seconds;
      engine_.start_compute_on(op.gpu, seconds, index);
      break;
    }
    case OpKind::send:
    case OpKind::recv: {
      const auto partner = static_cast<uint32_t>(analysis_.partner[index]);
      if (!posted_[partner]) break;  // the transfer starts when its second side is posted
      if (op.kind == OpKind::send)
        start_messages(index, partner);
      else
        start_messages(partner, index);
      break;
    }
    case OpKind::collective: {
      const auto collective = static_cast<size_t>(op.peer);
      if (++arrived_members_[collective] == analysis_.collective_ops[collective].size()) start_collective(collective);
      break;
    }
  }
}

double ScheduleRun::compute_s(const Op& op) {
  if (op.kind != OpKind::compute || op.count != 1) return op_compute_s(schedule_, grid_, op, gpu_);
  const BlockRef& block = schedule_.blocks_of(op)[0];
  const OneBlock key{op.pass, grid_.chunk_tokens(block.q_chunk), grid_.chunk_tokens(block.kv_chunk),
                     grid_.pairs(block.q_chunk, block.kv_chunk)};
  if (!last_block_ || last_block_->first != key) last_block_.emplace(key, op_compute_s(schedule_, grid_, op, gpu_));
  return last_block_->second;
}

void ScheduleRun::start_messages(uint32_t send, uint32_t recv) {
  const int32_t transfer = begin_transfer(TransferOps{send, recv, -1}, engine_.begin_transfer());
  const double bytes = bytes_of(schedule_.items_of(schedule_.ops[send]));
  // The send's peer: the recv's GPU, or, held by rotation, the GPU it stands for shifted.
  const int32_t src = schedule_.ops[send].gpu, dst = schedule_.ops[send].peer;
  if (options_.chunk_bytes <= 0 || bytes <= options_.chunk_bytes) {
    engine_.add_task(transfer, src, dst, bytes, true);
  } else {
    // Chunks in sequence: each waits for the one before it.
    const auto chunks = static_cast<int64_t>(std::ceil(bytes / options_.chunk_bytes));
    int32_t previous = -1;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const double size = std::min(options_.chunk_bytes, bytes - static_cast<double>(chunk) * options_.chunk_bytes);
      const int32_t task = engine_.add_task(transfer, src, dst, size, true);
      if (previous >= 0) engine_.add_dependency(previous, task);
      previous = task;
    }
  }
  engine_.start_transfer(transfer);
}

void ScheduleRun::start_collective(size_t index) {
  const Collective& collective = schedule_.collectives[index];
  const TransferOps ops{0, 0, static_cast<int32_t>(index)};
  int32_t transfer = -1;
  if (runs_as_ring(collective.kind)) {
    // The ring's pieces come from the transfers: all-gather by source, reduce-scatter by
    // destination (the member a piece belongs to), each the largest listed.
    const auto& members = collective.members;
    std::vector<double> piece_bytes(members.size(), 0);
    for (const auto& piece : collective.transfers) {
      const int32_t owner = collective.kind == CollectiveKind::all_gather ? piece.src : piece.dst;
      const auto position = static_cast<size_t>(std::find(members.begin(), members.end(), owner) - members.begin());
      piece_bytes[position] = std::max(piece_bytes[position], bytes_of(schedule_.items_of(piece)));
    }
    transfer = begin_transfer(ops, begin_ring_transfer(engine_, collective.kind, members, piece_bytes));
  } else {
    // All-to-all and permutations: direct, every transfer its own concurrent task.
    transfer = begin_transfer(ops, engine_.begin_transfer());
    for (const auto& piece : collective.transfers)
      engine_.add_task(transfer, piece.src, piece.dst, bytes_of(schedule_.items_of(piece)), true);
  }
  engine_.start_transfer(transfer);
}

int32_t ScheduleRun::begin_transfer(TransferOps ops, int32_t transfer) {
  // The engine reuses an arrived transfer's number: this slot is free again by then.
  if (static_cast<size_t>(transfer) >= transfer_ops_.size()) transfer_ops_.resize(static_cast<size_t>(transfer) + 1);
  transfer_ops_[static_cast<size_t>(transfer)] = ops;
  for_each_op(ops, [&](uint32_t op) {
    const auto gpu = static_cast<size_t>(schedule_.ops[op].gpu);
    if (in_flight_[gpu]++ == 0) busy_since_s_[gpu] = engine_.now_s();
  });
  return transfer;
}

void ScheduleRun::transfer_arrived(int32_t transfer) {
  const double now_s = engine_.now_s();
  for_each_op(transfer_ops_[static_cast<size_t>(transfer)], [&](uint32_t op) {
    const auto gpu = static_cast<size_t>(schedule_.ops[op].gpu);
    if (--in_flight_[gpu] == 0) result_.gpus[gpu].communication_s += now_s - busy_since_s_[gpu];
    complete(op);
  });
}

void ScheduleRun::complete(uint32_t op) {
  result_.op_finish_s[op] = engine_.now_s();
  for (uint32_t next : successors_.of(op))
    if (--pending_[next] == 0) ready_.push_back(next);
}

template <typename Visit>
void ScheduleRun::for_each_op(const TransferOps& ops, Visit visit) const {
  if (ops.collective < 0) {
    visit(ops.send);
    visit(ops.recv);
    return;
  }
  for (uint32_t op : analysis_.collective_ops[static_cast<size_t>(ops.collective)]) visit(op);
}

// One sequence's sizes, made with the check (schedules/item_sizes.hpp), times the batch: equal to
// item_bytes at the batch, without rebuilding each item's size for every message.
double ScheduleRun::bytes_of(std::span<const DataItem> items) const {
  int64_t total = 0;
  for (const auto& item : items) total += analysis_.item_sizes.one_sequence_bytes(item);
  return static_cast<double>(schedule_.problem.batch * total);
}

}  // namespace tessera::sim
