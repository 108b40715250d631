#include "tessera/costmodel/time_floor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "tessera/core/data_size.hpp"
#include "tessera/core/network_model.hpp"

namespace tessera::costmodel {

namespace {

int64_t bytes_of(const Schedule& schedule, const BlockGrid& grid, std::span<const DataItem> items) {
  int64_t total = 0;
  for (const DataItem& item : items) total += item_bytes(schedule, grid, item);
  return total;
}

// A collective's length as cost_schedule prices it on `network`: each member's transfers one
// after another, the busiest member's sending or receiving (a permutation: its longest
// transfer), and the overhead once where a transfer leaves its device.
double collective_s(const Schedule& schedule, const BlockGrid& grid, const Collective& collective,
                    const NetworkModel& network, const Hardware& hardware,
                    std::vector<std::pair<double, double>>& member_s, std::vector<int32_t>& touched) {
  double longest_s = 0;
  bool leaves_device = false;
  for (const Transfer& transfer : collective.transfers) {
    const int64_t bytes = bytes_of(schedule, grid, schedule.items_of(transfer));
    const PathClass path = network.path_class(transfer.src, transfer.dst);
    leaves_device = leaves_device || path != PathClass::local;
    const double seconds = network.transfer_s(transfer.src, transfer.dst, bytes) + hardware.message.latency_s(path);
    for (const int32_t member : {transfer.src, transfer.dst})
      if (member_s[static_cast<size_t>(member)] == std::pair<double, double>{0.0, 0.0}) touched.push_back(member);
    member_s[static_cast<size_t>(transfer.src)].first += seconds;
    member_s[static_cast<size_t>(transfer.dst)].second += seconds;
    longest_s = std::max(longest_s, seconds);
  }
  double duration_s = longest_s;
  for (const int32_t member : touched) {
    auto& [sending_s, receiving_s] = member_s[static_cast<size_t>(member)];
    if (collective.kind != CollectiveKind::permute) duration_s = std::max({duration_s, sending_s, receiving_s});
    sending_s = receiving_s = 0;
  }
  touched.clear();
  if (leaves_device) duration_s += hardware.message.overhead_s;
  return duration_s;
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
  std::vector<std::pair<double, double>> member_s(gpus, {0.0, 0.0});
  std::vector<int32_t> touched;
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
          length_s = collective_s(schedule, grid, schedule.collectives[static_cast<size_t>(op.peer)], uniform, hardware,
                                  member_s, touched);
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
