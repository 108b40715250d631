#include "tessera/costmodel/time_floor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tessera/core/data_size.hpp"
#include "tessera/core/network_model.hpp"

#include "collective_length.hpp"

namespace tessera::costmodel {

namespace {

int64_t bytes_of(const Schedule& schedule, const BlockGrid& grid, std::span<const DataItem> items) {
  int64_t total = 0;
  for (const DataItem& item : items) total += item_bytes(schedule, grid, item);
  return total;
}

}  // namespace

std::string TimeFloor::describe() const {
  if (gpu < 0) return "";
  switch (source) {
    case Source::stream: return "stream " + std::to_string(stream) + " of GPU " + std::to_string(gpu);
    case Source::link_out: return "the link out of GPU " + std::to_string(gpu);
    case Source::link_in: return "the links into GPU " + std::to_string(gpu);
  }
  return "";
}

TimeFloor analytic_time_floor(const Schedule& schedule, const BlockGrid& grid, const Hardware& hardware,
                              bool uniform_network) {
  const UniformNetwork uniform(hardware.link_latency_s, hardware.link_bytes_per_s);
  const auto gpus = static_cast<size_t>(std::max(schedule.gpus, 1));
  int32_t streams = 1;
  for (const Op& op : schedule.ops) {
    // Read before the check: an op off the schedule's GPUs, streams or collectives gets no floor
    // (0 sets nothing aside), and the check names it.
    const bool collective_known = op.kind != OpKind::collective ||
                                  (op.peer >= 0 && static_cast<size_t>(op.peer) < schedule.collectives.size());
    if (op.gpu < 0 || op.gpu >= schedule.gpus || op.stream < 0 || !collective_known) return TimeFloor{};
    streams = std::max(streams, op.stream + 1);
  }
  for (const Collective& collective : schedule.collectives)
    for (const Transfer& transfer : collective.transfers)
      if (transfer.src < 0 || transfer.src >= schedule.gpus || transfer.dst < 0 || transfer.dst >= schedule.gpus)
        return TimeFloor{};
  // Sums per (GPU, stream), and each GPU's wire time out and in.
  std::vector<double> stream_s(gpus * static_cast<size_t>(streams), 0), out_s(gpus, 0), in_s(gpus, 0);
  std::vector<double> collective_length_s(schedule.collectives.size(), std::numeric_limits<double>::quiet_NaN());
  CollectiveClock collective_clock(schedule.gpus);
  for (const Op& op : schedule.ops) {
    double duration_s = 0;
    switch (op.kind) {
      case OpKind::compute:
      case OpKind::merge:
        duration_s = compute_op_seconds(schedule, grid, op, hardware);
        break;
      case OpKind::send:
      case OpKind::recv: {
        if (!uniform_network) break;
        // A recv ends with its send, so it lasts at least as long: on the uniform network every
        // pair's transfer of the same bytes takes the same time.
        const int32_t src = op.kind == OpKind::send ? op.gpu : op.peer;
        const int32_t dst = op.kind == OpKind::send ? op.peer : op.gpu;
        const int64_t bytes = bytes_of(schedule, grid, schedule.items_of(op));
        const double transfer_s = uniform.transfer_s(src, dst, bytes);
        duration_s = transfer_s + hardware.message.message_s(uniform.path_class(src, dst));
        const double wire_s = transfer_s - uniform.transfer_s(src, dst, 0);
        (op.kind == OpKind::send ? out_s : in_s)[static_cast<size_t>(op.gpu)] += wire_s;
        break;
      }
      case OpKind::collective: {
        if (!uniform_network) break;
        double& length_s = collective_length_s[static_cast<size_t>(op.peer)];
        if (std::isnan(length_s))
          length_s = collective_clock.length_s(
              schedule, schedule.collectives[static_cast<size_t>(op.peer)], uniform, hardware,
              [&](const DataItem& item) { return item_bytes(schedule, grid, item); },
              [](const Transfer&, const DataItem&, int64_t) {});
        duration_s = length_s;
        break;
      }
    }
    stream_s[static_cast<size_t>(op.gpu) * static_cast<size_t>(streams) + static_cast<size_t>(op.stream)] += duration_s;
  }
  TimeFloor floor;
  auto consider = [&floor](double seconds, size_t gpu, TimeFloor::Source source, int32_t stream) {
    if (seconds > floor.seconds) floor = TimeFloor{seconds, static_cast<int32_t>(gpu), source, stream};
  };
  const auto per_gpu = static_cast<size_t>(streams);
  for (size_t index = 0; index < stream_s.size(); ++index)
    consider(stream_s[index], index / per_gpu, TimeFloor::Source::stream, static_cast<int32_t>(index % per_gpu));
  for (size_t gpu = 0; gpu < gpus; ++gpu) {
    consider(out_s[gpu], gpu, TimeFloor::Source::link_out, -1);
    consider(in_s[gpu], gpu, TimeFloor::Source::link_in, -1);
  }
  return floor;
}

}  // namespace tessera::costmodel
