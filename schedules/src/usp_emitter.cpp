#include "usp_emitter.hpp"

#include "ring_emitter.hpp"

namespace tessera::schedules {

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

void emit_head_split_ring(ScheduleBuilder& builder, const BlockGrid& grid, int32_t u, int32_t r, int32_t buffers,
                          bool first_group_only) {
  const Problem& problem = builder.problem();
  const Geometry mesh{u, r};
  const int32_t groups_emitted = first_group_only ? 1 : r;
  const int32_t compute = builder.stream("compute");
  const int32_t collective = builder.stream("collective");
  const RingStreams streams = make_ring_streams(builder, RingSide::pass_kv, buffers);

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
      for (int32_t group = 0; group < groups_emitted; ++group) {
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
    // The KV ring of the GPUs that compute head group h, one per group of u.
    std::vector<RingPass> rings;
    for (int32_t head = 0; head < u; ++head) {
      std::vector<int32_t> members;
      std::vector<std::vector<int32_t>> chunks;
      for (int32_t group = 0; group < r; ++group) {
        members.push_back(mesh.gpu(group, head));
        chunks.push_back(mesh.chunks(group));
      }
      rings.push_back(make_ring_pass(grid, RingSide::pass_kv, head, std::move(members), std::move(chunks)));
    }
    for (int32_t gpu = 0; gpu < groups_emitted * u; ++gpu) {
      const int32_t group = mesh.group_of(gpu), head = mesh.head_of(gpu);
      for (int32_t c : inbound[static_cast<size_t>(group)]) builder.collective_op(gpu, collective, c);
      emit_ring_pass(builder, grid, streams, rings[static_cast<size_t>(head)], pass, group);
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

}  // namespace tessera::schedules
