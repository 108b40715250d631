#include "usp_emitter.hpp"

namespace tessera {

namespace {

struct Geometry {
  int32_t u, r;
  int32_t group_of(int32_t gpu) const { return gpu / u; }    // ring position
  int32_t head_of(int32_t gpu) const { return gpu % u; }     // head group it computes
  int32_t gpu(int32_t group, int32_t head) const { return group * u + head; }
  int32_t wrap(int32_t group) const { return ((group % r) + r) % r; }
  // Chunks of a group: the u chunks its GPUs own.
  std::vector<int32_t> chunks(int32_t group) const {
    std::vector<int32_t> list;
    for (int32_t head = 0; head < u; ++head) list.push_back(group * u + head);
    return list;
  }
};

std::vector<DataItem> items(DataKind kind, int32_t head_group, const std::vector<int32_t>& chunks) {
  std::vector<DataItem> list;
  for (int32_t chunk : chunks) list.push_back(DataItem{kind, head_group, chunk});
  return list;
}

// An all-to-all inside one group: GPU (g, x) sends, for each other head y, the items
// make(y, chunk of x) to GPU (g, y) — or the reverse direction when `back` is set, where
// GPU (g, y) returns make(y, chunk of x) to its owner (g, x).
template <typename Make>
int32_t group_all_to_all(ScheduleBuilder& builder, Pass pass, const Geometry& mesh, int32_t group, bool back, Make make) {
  std::vector<int32_t> members;
  for (int32_t head = 0; head < mesh.u; ++head) members.push_back(mesh.gpu(group, head));
  int32_t collective = builder.begin_collective(CollectiveKind::all_to_all, pass, members);
  for (int32_t x = 0; x < mesh.u; ++x)
    for (int32_t y = 0; y < mesh.u; ++y) {
      if (x == y) continue;
      std::vector<DataItem> list = make(y, mesh.gpu(group, x));
      if (back) {
        builder.add_transfer(collective, mesh.gpu(group, y), mesh.gpu(group, x), list);
      } else {
        builder.add_transfer(collective, mesh.gpu(group, x), mesh.gpu(group, y), list);
      }
    }
  return collective;
}

}  // namespace

void emit_head_split_ring(ScheduleBuilder& builder, const BlockGrid& grid, int32_t u, int32_t r) {
  const Problem& problem = builder.peek().problem;
  const Geometry mesh{u, r};
  const int32_t gpus = u * r;
  const int32_t compute = builder.stream("compute");
  const int32_t collective = builder.stream("collective");
  const int32_t send = builder.stream("kv_send");
  const int32_t recv = builder.stream("kv_recv");

  // Blocks of head group `head` between the query chunks of `group` and the KV chunks of `other`.
  auto blocks = [&](int32_t head, int32_t group, int32_t other) {
    std::vector<BlockRef> list;
    for (int32_t q : mesh.chunks(group))
      for (int32_t kv : mesh.chunks(other))
        if (grid.has_work(q, kv)) list.push_back(BlockRef{head, q, kv});
    return list;
  };
  auto single = [](DataKind kind) {
    return [kind](int32_t head, int32_t chunk) { return std::vector<DataItem>{DataItem{kind, head, chunk}}; };
  };

  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    builder.set_pass(pass);
    const bool backward = pass == Pass::backward;
    // Collectives of every group, declared once; each member joins them in program order.
    std::vector<std::vector<int32_t>> inbound(static_cast<size_t>(r)), outbound(static_cast<size_t>(r));
    if (u > 1) {
      for (int32_t group = 0; group < r; ++group) {
        auto& in = inbound[static_cast<size_t>(group)];
        auto& out = outbound[static_cast<size_t>(group)];
        in.push_back(group_all_to_all(builder, pass, mesh, group, false, single(DataKind::Q)));
        in.push_back(group_all_to_all(builder, pass, mesh, group, false, single(DataKind::KV)));
        if (backward) {
          in.push_back(group_all_to_all(builder, pass, mesh, group, false, [](int32_t head, int32_t chunk) {
            return std::vector<DataItem>{DataItem{DataKind::dO, head, chunk}, DataItem{DataKind::Stats, head, chunk}};
          }));
          out.push_back(group_all_to_all(builder, pass, mesh, group, true, single(DataKind::dQ)));
          out.push_back(group_all_to_all(builder, pass, mesh, group, true, single(DataKind::dKV)));
        } else {
          out.push_back(group_all_to_all(builder, pass, mesh, group, true, [](int32_t head, int32_t chunk) {
            return std::vector<DataItem>{DataItem{DataKind::O, head, chunk}, DataItem{DataKind::LSE, head, chunk}};
          }));
        }
      }
    }
    for (int32_t gpu = 0; gpu < gpus; ++gpu) {
      const int32_t group = mesh.group_of(gpu), head = mesh.head_of(gpu);
      const int32_t next = mesh.gpu(mesh.wrap(group + 1), head), previous = mesh.gpu(mesh.wrap(group - 1), head);
      for (int32_t c : inbound[static_cast<size_t>(group)]) builder.collective_op(gpu, collective, c);
      builder.compute(gpu, pass, blocks(head, group, group), compute);
      for (int32_t step = 1; step < r; ++step) {
        const auto outgoing = mesh.chunks(mesh.wrap(group - step + 1));
        const auto incoming = mesh.chunks(mesh.wrap(group - step));
        std::vector<DataItem> sent = items(DataKind::KV, head, outgoing), received = items(DataKind::KV, head, incoming);
        if (backward) {
          // dK/dV partials travel with their K/V and collect one contribution per group.
          auto partial_out = items(DataKind::dKV, head, outgoing), partial_in = items(DataKind::dKV, head, incoming);
          sent.insert(sent.end(), partial_out.begin(), partial_out.end());
          received.insert(received.end(), partial_in.begin(), partial_in.end());
        }
        builder.send(gpu, send, next, sent);
        builder.recv(gpu, recv, previous, received);
        builder.compute(gpu, pass, blocks(head, group, mesh.wrap(group - step)), compute);
        if (backward) builder.merge(gpu, compute, items(DataKind::dKV, head, incoming));
      }
      if (backward && r > 1) {
        // The last hop brings every dK/dV partial back to its group, complete.
        builder.send(gpu, send, next, items(DataKind::dKV, head, mesh.chunks(mesh.wrap(group + 1))));
        builder.recv(gpu, recv, previous, items(DataKind::dKV, head, mesh.chunks(group)));
        builder.merge(gpu, compute, items(DataKind::dKV, head, mesh.chunks(group)));
      }
      for (int32_t c : outbound[static_cast<size_t>(group)]) builder.collective_op(gpu, collective, c);
      if (u > 1) {
        // Outputs of the other head groups arrive for this GPU's own chunk.
        std::vector<DataItem> arrived;
        for (int32_t other = 0; other < u; ++other) {
          if (other == head) continue;
          if (backward) {
            arrived.push_back({DataKind::dQ, other, gpu});
            arrived.push_back({DataKind::dKV, other, gpu});
          } else {
            arrived.push_back({DataKind::O, other, gpu});
            arrived.push_back({DataKind::LSE, other, gpu});
          }
        }
        builder.merge(gpu, compute, arrived);
      }
    }
  }
}

}  // namespace tessera
