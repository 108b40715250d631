#include "ring_emitter.hpp"

#include "tessera/core/error.hpp"

namespace tessera::schedules {

namespace {

int32_t wrap(int64_t value, int32_t size) { return static_cast<int32_t>(((value % size) + size) % size); }

// Appends (kind, head_group, chunk) for each kind, then each chunk, to `list`.
void append_items_of_kinds(std::initializer_list<DataKind> kinds, int32_t head_group, const std::vector<int32_t>& chunks,
                           std::vector<DataItem>& list) {
  for (DataKind kind : kinds)
    for (int32_t chunk : chunks) list.push_back(DataItem{kind, head_group, chunk});
}

// What travels with the chunk, and which partial follows it, for a side and a pass. Both fill
// `list` (cleared first): the emitter reuses its lists for every step instead of allocating.
void travelling_inputs(RingSide side, Pass pass, int32_t head_group, const std::vector<int32_t>& chunks,
                       std::vector<DataItem>& list) {
  list.clear();
  if (side == RingSide::pass_kv) return append_items_of_kinds({DataKind::KV}, head_group, chunks, list);
  if (pass == Pass::forward) return append_items_of_kinds({DataKind::Q}, head_group, chunks, list);
  append_items_of_kinds({DataKind::Q, DataKind::dO, DataKind::Stats}, head_group, chunks, list);
}
void travelling_partial(RingSide side, Pass pass, int32_t head_group, const std::vector<int32_t>& chunks,
                        std::vector<DataItem>& list) {
  list.clear();
  if (side == RingSide::pass_kv) {
    if (pass != Pass::forward) append_items_of_kinds({DataKind::dKV}, head_group, chunks, list);
    return;
  }
  if (pass == Pass::forward) return append_items_of_kinds({DataKind::O, DataKind::LSE}, head_group, chunks, list);
  append_items_of_kinds({DataKind::dQ}, head_group, chunks, list);
}

}  // namespace

RingSide parse_ring_side(const std::string& variant) {
  if (variant.empty() || variant == "pass-kv") return RingSide::pass_kv;
  if (variant == "pass-q") return RingSide::pass_q;
  throw UserError("--variant: ring takes pass-kv (default) or pass-q, got '" + variant + "'");
}

std::string to_string(RingSide side) { return side == RingSide::pass_kv ? "pass-kv" : "pass-q"; }

RingStreams make_ring_streams(ScheduleBuilder& builder, RingSide side, int32_t buffers) {
  RingStreams streams;
  streams.compute = builder.stream("compute");
  if (side == RingSide::pass_kv) {
    streams.travel_send = builder.stream("kv_send");
    streams.travel_recv = builder.stream("kv_recv", buffers);
    streams.partial_send = builder.stream("dkv_send");
    streams.partial_recv = builder.stream("dkv_recv", buffers);
  } else {
    streams.travel_send = builder.stream("q_send");
    streams.travel_recv = builder.stream("q_recv", buffers);
    streams.partial_send = builder.stream("out_send");
    streams.partial_recv = builder.stream("out_recv", buffers);
  }
  return streams;
}

RingPass make_ring_pass(const BlockGrid& grid, RingSide side, int32_t head_group, std::vector<int32_t> members,
                        std::vector<std::vector<int32_t>> chunks) {
  RingPass ring{side, head_group, std::move(members), std::move(chunks), {}};
  const auto size = static_cast<int32_t>(ring.members.size());
  auto has_work = [&](int32_t resident, int32_t travelling) {
    return side == RingSide::pass_kv ? grid.has_work(resident, travelling) : grid.has_work(travelling, resident);
  };
  ring.first_contribution.resize(static_cast<size_t>(size));
  for (int32_t origin = 0; origin < size; ++origin) {
    const auto& travelling = ring.chunks[static_cast<size_t>(origin)];
    auto& first = ring.first_contribution[static_cast<size_t>(origin)];
    first.assign(travelling.size(), size);
    for (size_t x = 0; x < travelling.size(); ++x)
      for (int32_t hops = 1; hops < size && first[x] == size; ++hops)
        for (int32_t resident : ring.chunks[static_cast<size_t>(wrap(origin + hops, size))])
          if (has_work(resident, travelling[x])) {
            first[x] = hops;
            break;
          }
  }
  return ring;
}

void emit_ring_pass(ScheduleBuilder& builder, const BlockGrid& grid, const RingStreams& streams, const RingPass& ring,
                    Pass pass, int32_t position) {
  const auto size = static_cast<int32_t>(ring.members.size());
  const int32_t gpu = ring.members[static_cast<size_t>(position)];
  const int32_t next = ring.members[static_cast<size_t>(wrap(position + 1, size))];
  const int32_t previous = ring.members[static_cast<size_t>(wrap(position - 1, size))];
  const std::vector<int32_t>& resident = ring.chunks[static_cast<size_t>(position)];
  // The chunks that travel through this member at step s: those of the member s hops back.
  auto origin = [&](int32_t step) { return wrap(position - step, size); };
  auto travelling = [&](int32_t step) -> const std::vector<int32_t>& { return ring.chunks[static_cast<size_t>(origin(step))]; };
  // Lists reused for every step (one allocation each per member, not one per step).
  std::vector<BlockRef> blocks;
  std::vector<DataItem> arriving, inputs, leaving;
  std::vector<int32_t> alive;
  auto blocks_at = [&](int32_t step) {
    blocks.clear();
    for (int32_t mine : resident)
      for (int32_t theirs : travelling(step)) {
        const int32_t q = ring.side == RingSide::pass_kv ? mine : theirs;
        const int32_t kv = ring.side == RingSide::pass_kv ? theirs : mine;
        if (grid.has_work(q, kv)) blocks.push_back(BlockRef{ring.head_group, q, kv});
      }
  };
  // The partial items of the chunks travelling at `step` that hold a contribution once the
  // member `hops` steps after their origin has added its own.
  travelling_partial(ring.side, pass, ring.head_group, resident, leaving);
  const bool travels = size > 1 && !leaving.empty();
  auto partial_after = [&](int32_t step, int32_t hops, std::vector<DataItem>& list) {
    list.clear();
    if (!travels) return;
    alive.clear();
    const auto& chunks = travelling(step);
    const auto& first = ring.first_contribution[static_cast<size_t>(origin(step))];
    for (size_t x = 0; x < chunks.size(); ++x)
      if (first[x] <= hops) alive.push_back(chunks[x]);
    travelling_partial(ring.side, pass, ring.head_group, alive, list);
  };

  for (int32_t step = 0; step < size; ++step) {
    // The partial of this step's chunks, from the member that held them last step. Posted
    // before the next chunk's receive: sends from one member to the next alternate chunk,
    // partial, chunk, partial, and transfers between a pair match in program order.
    arriving.clear();
    if (step >= 2) partial_after(step, step - 1, arriving);
    if (!arriving.empty()) builder.recv(gpu, streams.partial_recv, previous, arriving);
    if (step + 1 < size) {
      travelling_inputs(ring.side, pass, ring.head_group, travelling(step), inputs);
      builder.send(gpu, streams.travel_send, next, inputs);
      travelling_inputs(ring.side, pass, ring.head_group, travelling(step + 1), inputs);
      builder.recv(gpu, streams.travel_recv, previous, inputs);
    }
    blocks_at(step);
    if (!blocks.empty()) builder.compute(gpu, pass, blocks, streams.compute);
    if (step >= 1) {
      if (!arriving.empty()) builder.merge(gpu, streams.compute, arriving);
      partial_after(step, step, leaving);
      if (!leaving.empty()) builder.send(gpu, streams.partial_send, next, leaving);
    }
  }
  // The last hop brings the partial of the member's own chunks home, to be merged with the
  // contribution it kept.
  partial_after(0, size - 1, leaving);
  if (!leaving.empty()) {
    builder.recv(gpu, streams.partial_recv, previous, leaving);
    builder.merge(gpu, streams.compute, leaving);
  }
}

}  // namespace tessera::schedules
