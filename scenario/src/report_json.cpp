#include "tessera/scenario/report_json.hpp"

#include <algorithm>

#include "tessera/costmodel/report_json.hpp"
#include "tessera/schedules/schedule_json.hpp"

namespace tessera::scenario {

using nlohmann::json;

json network_to_json(const NetworkFigures& figures) {
  json inter_node = json::object();
  for (int kind = 0; kind < kDataKindCount; ++kind)
    inter_node[to_string(static_cast<DataKind>(kind))] = figures.loads.inter_node_bytes[static_cast<size_t>(kind)];
  return json{{"topology", figures.topology},
              {"placement", figures.placement.order},
              {"placement_searched", figures.placement.searched},
              {"routing", figures.routing},
              {"busiest_link", figures.busiest_link},
              {"busiest_link_bytes", figures.loads.busiest_edge_bytes},
              {"inter_node_bytes_by_kind", inter_node}};
}

json figures_to_json(const Schedule& schedule, const Figures& figures, bool per_gpu) {
  json out = costmodel::cost_report_to_json(schedule, figures.cost, per_gpu);
  if (figures.simulated_s) out["simulated_s"] = *figures.simulated_s;
  if (figures.simulated_bound) {
    out["simulated_lower_bound_time_s"] = {{"compute", figures.simulated_bound->compute_s},
                                           {"communication", figures.simulated_bound->communication_s},
                                           {"total", figures.simulated_bound->total_s()}};
    out["simulated_over_lower_bound"] = figures.time_over_bound();
  }
  if (figures.network) out["network"] = network_to_json(*figures.network);
  return out;
}

json cost_to_json(const Evaluation& evaluation, const Scenario& scenario, bool per_gpu) {
  json out = figures_to_json(evaluation.schedule(), evaluation.figures, per_gpu);
  out["hardware"] = costmodel::hardware_to_json(scenario.hardware);
  return out;
}

json plan_to_json(const Scenario& base, const PlanResult& plan, size_t top, bool per_gpu) {
  json out;
  out["problem"] = schedules::problem_to_json(base.problem);
  out["gpus"] = base.options.gpus;
  out["hardware"] = costmodel::hardware_to_json(base.hardware);
  out["model"] = base.simulation ? "flow" : "analytic";
  out["topology"] = base.network.topology ? json(base.network.topology->name) : json("uniform");
  const size_t shown = top > 0 ? std::min(plan.ranking.size(), top) : plan.ranking.size();
  json ranking = json::array();
  for (size_t position = 0; position < shown; ++position) {
    const PlanEntry& entry = plan.ranked(position);
    ranking.push_back(figures_to_json(entry.identity, *entry.figures, per_gpu));
  }
  out["ranking"] = ranking;
  json not_applicable = json::array(), set_aside = json::array();
  for (const PlanEntry& entry : plan.entries) {
    if (entry.set_aside)
      set_aside.push_back(
          {{"schedule", entry.identity.name()}, {"floor_s", entry.floor.seconds}, {"floor_from", entry.floor.describe()}});
    else if (!entry.figures)
      not_applicable.push_back({{"schedule", entry.label}, {"reason", entry.refusal}});
  }
  out["not_applicable"] = not_applicable;
  // Generated, but neither checked nor priced: each one's time floor is above the best time.
  out["set_aside"] = set_aside;
  return out;
}

json simulation_to_json(const Evaluation& evaluation, const Scenario& scenario, bool per_gpu) {
  const topo::Topology& topology = *evaluation.simulated_topology;
  json summary = sim::simulation_summary_json(evaluation.schedule(), topology, *evaluation.simulation, per_gpu);
  summary["fidelity"] = sim::to_string(scenario.simulation->options.fidelity);
  summary["gpu"] = scenario.simulation->gpu.name;
  summary["placement"] = evaluation.simulated_placement.order;
  summary["routing"] = topo::to_string(topology.routing);
  return summary;
}

json collective_to_json(const CollectiveEvaluation& evaluation, const CollectiveText& text) {
  const sim::CollectiveResult& result = evaluation.result;
  return json{{"collective", to_string(evaluation.collective)},
              {"algorithm", text.algorithm},
              {"size_bytes", evaluation.bytes},
              {"ranks", evaluation.ranks},
              {"topology", evaluation.topology->name},
              {"fidelity", text.fidelity},
              {"makespan_s", result.makespan_s},
              {"algbw_bytes_per_s", result.algbw_bytes_per_s},
              {"busbw_bytes_per_s", result.busbw_bytes_per_s},
              {"flows", result.flows},
              {"events", result.events}};
}

}  // namespace tessera::scenario
