#pragma once
// The JSON views of what the scenario library computes, written once for every front end that
// shows them as data: the command line's --json output and the Python module's return values
// (the same keys, units in their names: time_s, recv_bytes_max, ...).
#include <cstddef>

#include <nlohmann/json.hpp>

#include "tessera/scenario/collective.hpp"
#include "tessera/scenario/evaluate.hpp"
#include "tessera/scenario/plan.hpp"

namespace tessera::scenario {

// Where the traffic lands: topology, placement, routing, the busiest link and its bytes, the
// bytes between servers by data kind.
nlohmann::json network_to_json(const NetworkFigures& figures);

// The cost report (costmodel/report_json.hpp) of `schedule` (its identity is enough: no op is
// read), with the simulated time, its bound and the network figures where there are some.
nlohmann::json figures_to_json(const Schedule& schedule, const Figures& figures, bool per_gpu);

// `tessera cost --json`: the figures and the analytical model's hardware.
nlohmann::json cost_to_json(const Evaluation& evaluation, const Scenario& scenario, bool per_gpu);

// `tessera plan --json`: problem, GPUs, hardware, model, topology, the first `top` of the
// ranking (0: all) and the candidates that do not apply with the reason.
nlohmann::json plan_to_json(const Scenario& base, const PlanResult& plan, size_t top, bool per_gpu);

// `tessera simulate --json` of a schedule: the simulator's summary with its fidelity, GPU
// profile, placement and routing (the front end adds its own wall-clock figures).
nlohmann::json simulation_to_json(const Evaluation& evaluation, const Scenario& scenario, bool per_gpu);

// `tessera simulate --collective --json` (the front end adds its wall-clock figures).
nlohmann::json collective_to_json(const CollectiveEvaluation& evaluation, const CollectiveText& text);

}  // namespace tessera::scenario
