#include "tessera/costmodel/report_json.hpp"

#include "tessera/schedules/schedule_json.hpp"

namespace tessera::costmodel {

using nlohmann::json;

namespace {
json bytes_by_kind(const BytesByKind& bytes) {
  json out = json::object();
  for (int kind = 0; kind < kDataKindCount; ++kind) out[to_string(static_cast<DataKind>(kind))] = bytes[static_cast<size_t>(kind)];
  return out;
}
}  // namespace

json hardware_to_json(const Hardware& hardware) {
  return json{{"peak_flops_per_s", hardware.peak_flops_per_s},
              {"compute_efficiency", hardware.compute_efficiency},
              {"hbm_bytes_per_s", hardware.hbm_bytes_per_s},
              {"link_bytes_per_s", hardware.link_bytes_per_s},
              {"link_latency_s", hardware.link_latency_s},
              {"kernel_launch_s", hardware.kernel_launch_s},
              {"message_overhead_s", hardware.message.overhead_s},
              {"nvlink_message_latency_s", hardware.message.nvlink_latency_s},
              {"network_message_latency_s", hardware.message.network_latency_s}};
}

json cost_report_to_json(const Schedule& schedule, const CostReport& report, bool per_gpu) {
  json out;
  out["schedule"] = schedule.name();
  out["algorithm"] = schedule.algorithm;
  out["variant"] = schedule.variant;
  out["layout"] = to_string(schedule.layout);
  out["gpus"] = schedule.gpus;
  out["head_groups"] = schedule.head_groups;
  out["problem"] = schedules::problem_to_json(schedule.problem);
  out["recv_bytes_max"] = report.recv_bytes_max;
  int64_t received_total = 0;
  for (const auto& gpu : report.gpus) received_total += gpu.received_total();
  out["recv_bytes_total"] = received_total;
  json by_kind = json::object();
  for (int kind = 0; kind < kDataKindCount; ++kind)
    by_kind[to_string(static_cast<DataKind>(kind))] = report.recv_bytes_mean_by_kind[static_cast<size_t>(kind)];
  out["recv_bytes_by_kind"] = by_kind;
  out["flops_max"] = report.flops_max;
  out["flops_total"] = report.flops_total;
  out["peak_memory_bytes_max"] = report.peak_memory_bytes_max;
  out["peak_transfer_bytes_max"] = report.peak_transfer_bytes_max;
  out["time_s"] = report.time_s;
  out["compute_s_max"] = report.compute_s_max;
  out["comm_s_max"] = report.comm_s_max;
  out["bytes_per_flop"] = report.bytes_per_flop;
  out["comm_over_compute"] = report.comm_over_compute;
  // "total" is the bound for the problem's passes together (lower_bound.hpp), held against
  // recv_bytes_max; with both passes it is not the sum of the two.
  out["lower_bound_bytes"] = {{"forward", report.lower_bound.forward_bytes},
                              {"backward", report.lower_bound.backward_bytes},
                              {"total", report.lower_bound.total_bytes()},
                              {"busiest_inputs", report.lower_bound.busiest_inputs_bytes},
                              {"mean_traffic", report.lower_bound.mean_traffic_bytes}};
  out["lower_bound_ratio"] = report.lower_bound_ratio;
  out["lower_bound_time_s"] = {{"compute", report.lower_bound_time.compute_s},
                               {"communication", report.lower_bound_time.communication_s},
                               {"total", report.lower_bound_time.total_s()}};
  out["time_over_lower_bound"] = report.time_over_lower_bound;
  if (per_gpu) {
    json gpus = json::array();
    for (size_t g = 0; g < report.gpus.size(); ++g) {
      const GpuCost& gpu = report.gpus[g];
      gpus.push_back({{"gpu", g},
                      {"recv_bytes", gpu.received_total()},
                      {"sent_bytes", gpu.sent_total()},
                      {"recv_bytes_by_kind", bytes_by_kind(gpu.received_bytes)},
                      {"sent_bytes_by_kind", bytes_by_kind(gpu.sent_bytes)},
                      {"flops", gpu.flops},
                      {"peak_memory_bytes", gpu.peak_memory_bytes},
                      {"resident_bytes", gpu.resident_bytes},
                      {"peak_transfer_bytes", gpu.peak_transfer_bytes},
                      {"compute_s", gpu.compute_s},
                      {"comm_s", gpu.comm_s},
                      {"finish_s", gpu.finish_s}});
    }
    out["per_gpu"] = gpus;
  }
  return out;
}

}  // namespace tessera::costmodel
