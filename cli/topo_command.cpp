#include "topo_command.hpp"

#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "table.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/scenario/network.hpp"

namespace tessera::cli {

namespace {
int32_t gpus_of(const TopoFlags& flags) {
  if (flags.gpus.empty()) return 0;
  int64_t gpus = 0;
  try {
    gpus = parse_count(flags.gpus);
  } catch (const UserError& error) {
    throw UserError(std::string("--gpus: ") + error.what());
  }
  // Checked before narrowing: 4294967297 must not wrap to 1.
  if (gpus < 1 || gpus > std::numeric_limits<int32_t>::max())
    throw UserError("--gpus: expected a GPU count from 1 to " + std::to_string(std::numeric_limits<int32_t>::max()) +
                    ", got " + quoted(flags.gpus));
  return static_cast<int32_t>(gpus);
}
}  // namespace

int run_topo(const TopoFlags& flags) {
  if (flags.action == "list") {
    auto presets = topo::list_presets();
    if (flags.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& preset : presets) list.push_back({{"name", preset.name}, {"summary", preset.summary}});
      std::cout << nlohmann::json{{"presets", list}}.dump(2) << "\n";
      return 0;
    }
    Table table({"preset", "what it is"});
    for (const auto& preset : presets) table.add_row({preset.name, preset.summary});
    table.print(std::cout);
    std::cout << "\nAny of these, or a YAML file (see topologies/examples/), works with --topology.\n";
    return 0;
  }
  if (flags.target.empty()) throw UserError("topo " + flags.action + " needs a preset or a file");
  topo::Topology topology = topo::load_topology(flags.target, gpus_of(flags));
  if (flags.action == "dot") {
    std::cout << topo::to_dot(topology);
    return 0;
  }
  if (flags.action != "show" && flags.action != "check")
    throw UserError("unknown topo action '" + flags.action + "' (expected list, show, check or dot)");
  topo::TopologyMetrics metrics = topo::measure(topology);
  if (flags.json) {
    nlohmann::json out = {{"name", topology.name},
                          {"source", topology.source},
                          {"gpus", metrics.gpus},
                          {"switches", metrics.switches},
                          {"links", metrics.links},
                          {"diameter_hops", metrics.diameter_hops},
                          {"bisection_bytes_per_s", metrics.bisection_bytes_per_s},
                          {"gpus_per_node", topology.gpus_per_node},
                          {"routing", topo::to_string(topology.routing)}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (flags.action == "check") {
    std::cout << flags.target << ": valid topology '" << topology.name << "' (" << metrics.gpus << " GPUs, "
              << metrics.switches << " switches, " << metrics.links << " directed links, connected)\n";
    return 0;
  }
  Table table({"property", "value"});
  table.add_row({"name", topology.name});
  table.add_row({"GPUs", std::to_string(metrics.gpus)});
  table.add_row({"GPUs per node", std::to_string(topology.gpus_per_node)});
  table.add_row({"switches", std::to_string(metrics.switches)});
  table.add_row({"directed links", std::to_string(metrics.links)});
  table.add_row({"routing", topo::to_string(topology.routing) +
                               (topology.routing == topo::RoutingPolicy::pxn ? " (between servers via the NIC on the "
                                                                               "destination's rail)"
                                                                             : "")});
  table.add_row({"diameter", std::to_string(metrics.diameter_hops) + " hops"});
  table.add_row({"bisection", format_bytes(metrics.bisection_bytes_per_s) + "/s per direction"});
  table.print(std::cout);
  return 0;
}

}  // namespace tessera::cli
