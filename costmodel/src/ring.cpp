// Ring-Attention, pass-KV: every GPU keeps its query chunk and the key/value chunks travel
// around the ring, one hop per step; GPU p meets KV chunk p - s at step s. In the backward
// pass the dK/dV partial of each chunk travels with it, collects one contribution per GPU and
// finally returns to its owner (P hops in all). The layout only changes which tokens a chunk
// holds, so contiguous, zigzag and striped rings share this one generator.
#include "tessera/costmodel/generators.hpp"

namespace tessera {

namespace {
int32_t wrap(int64_t value, int32_t size) { return static_cast<int32_t>(((value % size) + size) % size); }
}  // namespace

Schedule generate_ring(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  ScheduleBuilder builder("ring", to_string(grid.layout()), problem, grid.layout(), gpus);
  const int32_t compute = builder.stream("compute");
  const int32_t send = builder.stream("kv_send");
  const int32_t recv = builder.stream("kv_recv");
  auto compute_if_work = [&](int32_t gpu, Pass pass, int32_t q, int32_t kv) {
    if (grid.has_work(q, kv)) builder.compute(gpu, pass, BlockRef{0, q, kv}, compute);
  };

  if (problem.has_forward()) {
    builder.set_pass(Pass::forward);
    for (int32_t p = 0; p < gpus; ++p) {
      const int32_t next = wrap(p + 1, gpus), previous = wrap(p - 1, gpus);
      compute_if_work(p, Pass::forward, p, p);
      for (int32_t step = 1; step < gpus; ++step) {
        builder.send(p, send, next, {DataItem{DataKind::KV, 0, wrap(p - step + 1, gpus)}});
        builder.recv(p, recv, previous, {DataItem{DataKind::KV, 0, wrap(p - step, gpus)}});
        compute_if_work(p, Pass::forward, p, wrap(p - step, gpus));
      }
    }
  }
  if (problem.has_backward()) {
    builder.set_pass(Pass::backward);
    for (int32_t p = 0; p < gpus; ++p) {
      const int32_t next = wrap(p + 1, gpus), previous = wrap(p - 1, gpus);
      compute_if_work(p, Pass::backward, p, p);
      for (int32_t step = 1; step < gpus; ++step) {
        const int32_t outgoing = wrap(p - step + 1, gpus), incoming = wrap(p - step, gpus);
        builder.send(p, send, next, {DataItem{DataKind::KV, 0, outgoing}, DataItem{DataKind::dKV, 0, outgoing}});
        builder.recv(p, recv, previous, {DataItem{DataKind::KV, 0, incoming}, DataItem{DataKind::dKV, 0, incoming}});
        compute_if_work(p, Pass::backward, p, incoming);
        builder.merge(p, compute, {DataItem{DataKind::dKV, 0, incoming}});
      }
      if (gpus > 1) {
        // The last hop brings every dK/dV partial home, complete.
        builder.send(p, send, next, {DataItem{DataKind::dKV, 0, next}});
        builder.recv(p, recv, previous, {DataItem{DataKind::dKV, 0, p}});
        builder.merge(p, compute, {DataItem{DataKind::dKV, 0, p}});
      }
    }
  }
  return builder.finish();
}

}  // namespace tessera
