#include "tessera/sim/time_bound.hpp"

#include <algorithm>
#include <vector>

#include "tessera/core/data_size.hpp"

#include "tessera/sim/simulator.hpp"
#include "topology_links.hpp"

namespace tessera::sim {

namespace {

// What the links into the best-connected GPU carry together.
double fastest_ingress_bytes_per_s(const topo::Topology& topology) {
  double fastest_bytes_per_s = 0;
  for (int32_t index = 0; index < topology.gpu_count(); ++index)
    fastest_bytes_per_s = std::max(fastest_bytes_per_s, links::ingress_bytes_per_s(topology, index));
  return fastest_bytes_per_s;
}

}  // namespace

costmodel::TimeLowerBound simulated_time_bound(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                    const GpuProfile& gpu) {
  const double fastest_bytes_per_s = fastest_ingress_bytes_per_s(topology);
  return costmodel::time_lower_bound(
      schedule, grid, [&](const Schedule& ideal, const Op& op) { return op_compute_s(ideal, grid, op, gpu); },
      fastest_bytes_per_s);
}

costmodel::TimeFloor simulated_time_floor(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                          const GpuProfile& gpu, bool ranks_share_devices) {
  using costmodel::TimeFloor;
  const auto gpus = static_cast<size_t>(std::max(schedule.gpus, 1));
  int32_t streams = 1;
  for (const Op& op : schedule.ops) {
    if (op.gpu < 0 || op.gpu >= schedule.gpus || op.stream < 0) return TimeFloor{};  // unchecked: the check names it
    streams = std::max(streams, op.stream + 1);
  }
  const auto per_gpu = static_cast<size_t>(streams);
  std::vector<double> stream_s(gpus * per_gpu, 0);
  std::vector<double> received_bytes(gpus, 0);
  for (const Op& op : schedule.ops) {
    if (op.kind == OpKind::compute || op.kind == OpKind::merge)
      stream_s[static_cast<size_t>(op.gpu) * per_gpu + static_cast<size_t>(op.stream)] += op_compute_s(schedule, grid, op, gpu);
    else if (op.kind == OpKind::recv)
      for (const DataItem& item : schedule.items_of(op))
        received_bytes[static_cast<size_t>(op.gpu)] += static_cast<double>(item_bytes(schedule, grid, item));
  }
  TimeFloor floor;
  for (size_t index = 0; index < stream_s.size(); ++index)
    if (stream_s[index] > floor.seconds)
      floor = TimeFloor{stream_s[index], static_cast<int32_t>(index / per_gpu), TimeFloor::Source::stream,
                        static_cast<int32_t>(index % per_gpu)};
  if (ranks_share_devices) return floor;
  const double fastest_bytes_per_s = fastest_ingress_bytes_per_s(topology);
  if (fastest_bytes_per_s > 0)
    for (size_t rank = 0; rank < gpus; ++rank)
      if (received_bytes[rank] / fastest_bytes_per_s > floor.seconds)
        floor = TimeFloor{received_bytes[rank] / fastest_bytes_per_s, static_cast<int32_t>(rank), TimeFloor::Source::link_in, -1};
  return floor;
}

}  // namespace tessera::sim
