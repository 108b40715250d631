#include "tessera/sim/trace.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "tessera/core/json_io.hpp"
#include "topology_links.hpp"

namespace tessera::sim {

using nlohmann::json;

namespace {
std::string op_name(const Schedule& schedule, const Op& op) {
  switch (op.kind) {
    case OpKind::compute:
      return std::string(op.pass == Pass::forward ? "fwd " : "bwd ") + std::to_string(op.count) +
             (op.count == 1 ? " block" : " blocks");
    case OpKind::send: return "send to " + std::to_string(op.peer);
    case OpKind::recv: return "recv from " + std::to_string(op.peer);
    case OpKind::merge: return "merge";
    case OpKind::collective: return to_string(schedule.collectives[static_cast<size_t>(op.peer)].kind);
  }
  return "?";
}
// `value` in the fewest digits that read back as the same double (std::to_chars' shortest
// round trip): 5242880 stays 5242880, 1e-7 stays 1e-07's exact double, never 6 digits.
std::string exact(double value) {
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break (a link named in
// a topology file may).
std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Schedule& schedule, const SimResult& result) {
  json events = json::array();
  for (int32_t gpu = 0; gpu < schedule.gpus; ++gpu) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", gpu}, {"tid", 0},
                      {"args", {{"name", "GPU " + std::to_string(gpu)}}}});
    for (size_t stream = 0; stream < schedule.stream_names.size(); ++stream)
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", gpu}, {"tid", stream},
                        {"args", {{"name", schedule.stream_names[stream]}}}});
  }
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    const double start_us = result.op_start_s[index] * 1e6;
    json args = {{"op", index}, {"pass", to_string(op.pass)}};
    if (op.kind == OpKind::send || op.kind == OpKind::recv) args["peer"] = op.peer;
    events.push_back({{"name", op_name(schedule, op)},
                      {"cat", to_string(op.kind)},
                      {"ph", "X"},
                      {"ts", start_us},
                      {"dur", std::max(0.0, result.op_finish_s[index] * 1e6 - start_us)},
                      {"pid", op.gpu},
                      {"tid", op.stream},
                      {"args", args}});
  }
  // json_text: names from a schedule file may hold bytes that are not UTF-8. Numbers are written
  // in round-trip precision.
  out << json_text(json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}) << "\n";
}

void write_ops_csv(std::ostream& out, const Schedule& schedule, const SimResult& result) {
  out << "op,gpu,stream,kind,pass,peer,blocks_or_items,start_s,finish_s,duration_s\n";
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    const Op& op = schedule.ops[index];
    out << index << "," << op.gpu << "," << csv_field(schedule.stream_names[static_cast<size_t>(op.stream)]) << ","
        << to_string(op.kind) << "," << to_string(op.pass) << "," << op.peer << "," << op.count << ","
        << exact(result.op_start_s[index]) << "," << exact(result.op_finish_s[index]) << ","
        << exact(result.op_finish_s[index] - result.op_start_s[index]) << "\n";
  }
}

void write_links_csv(std::ostream& out, const topo::Topology& topology, const SimResult& result) {
  out << "resource,link,capacity_bytes_per_s,bytes,busy_s,utilization\n";
  // Each resource by the first link on it (links::resource_name), found in one pass.
  std::vector<std::string> names(result.resources.size());
  for (int32_t link = 0; link < topology.link_count(); ++link) {
    const auto resource = static_cast<size_t>(topology.link(link).resource);
    if (resource < names.size() && names[resource].empty()) names[resource] = topology.link_name(link);
  }
  for (size_t r = 0; r < result.resources.size(); ++r) {
    const LinkStats& stats = result.resources[r];
    const std::string name = names[r].empty() ? "resource" + std::to_string(r) : names[r];
    out << r << "," << csv_field(name) << "," << exact(topology.resource_bytes_per_s[r]) << "," << exact(stats.bytes)
        << "," << exact(stats.busy_s) << "," << exact(stats.utilization) << "\n";
  }
}

json simulation_summary_json(const Schedule& schedule, const topo::Topology& topology, const SimResult& result,
                             bool per_gpu) {
  json out;
  out["schedule"] = schedule.name();
  out["topology"] = topology.name;
  out["makespan_s"] = result.makespan_s;
  double compute_max = 0, communication_max = 0, wait_max = 0;
  for (const auto& gpu : result.gpus) {
    compute_max = std::max(compute_max, gpu.compute_s);
    communication_max = std::max(communication_max, gpu.communication_s);
    wait_max = std::max(wait_max, gpu.exposed_wait_s);
  }
  out["compute_s_max"] = compute_max;
  out["communication_s_max"] = communication_max;
  out["exposed_wait_s_max"] = wait_max;
  size_t busiest = 0;
  for (size_t r = 0; r < result.resources.size(); ++r)
    if (result.resources[r].bytes > result.resources[busiest].bytes) busiest = r;
  if (!result.resources.empty()) {
    out["busiest_link"] = links::resource_name(topology, busiest);
    out["busiest_link_bytes"] = result.resources[busiest].bytes;
    out["busiest_link_utilization"] = result.resources[busiest].utilization;
  }
  out["lower_bound_s"] = result.lower_bound_s;
  out["makespan_over_lower_bound"] = result.lower_bound_s > 0 ? result.makespan_s / result.lower_bound_s : 0;
  out["transfers"] = result.transfers;
  out["events"] = result.events;
  out["critical_path_ops"] = result.critical_path.size();
  // The critical path itself: what the makespan is made of, op by op.
  json path = json::array();
  double compute_on_path_s = 0, other_on_path_s = 0;
  for (uint32_t index : result.critical_path) {
    const Op& op = schedule.ops[index];
    double seconds = result.op_finish_s[index] - result.op_start_s[index];
    (op.kind == OpKind::compute || op.kind == OpKind::merge ? compute_on_path_s : other_on_path_s) += seconds;
    if (path.size() < 1000)
      path.push_back({{"op", index}, {"gpu", op.gpu}, {"kind", to_string(op.kind)}, {"name", op_name(schedule, op)},
                      {"start_s", result.op_start_s[index]}, {"finish_s", result.op_finish_s[index]}});
  }
  out["critical_path_compute_s"] = compute_on_path_s;
  out["critical_path_communication_s"] = other_on_path_s;
  out["critical_path"] = path;
  if (per_gpu) {
    json gpus = json::array();
    for (size_t g = 0; g < result.gpus.size(); ++g)
      gpus.push_back({{"gpu", g},
                      {"compute_s", result.gpus[g].compute_s},
                      {"communication_s", result.gpus[g].communication_s},
                      {"exposed_wait_s", result.gpus[g].exposed_wait_s},
                      {"received_bytes", result.gpus[g].received_bytes},
                      {"finish_s", result.gpus[g].finish_s}});
    out["per_gpu"] = gpus;
  }
  return out;
}

}  // namespace tessera::sim
