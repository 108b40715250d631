#pragma once
// Outputs of a simulation in the formats the field uses: a Chrome trace (Perfetto, times in
// microseconds; one process per GPU, one thread per stream), CSV of ops and links, and a JSON
// summary.
#include <ostream>

#include <nlohmann/json.hpp>

#include "tessera/sim/simulator.hpp"

namespace tessera::sim {

void write_chrome_trace(std::ostream& out, const Schedule& schedule, const SimResult& result);
void write_ops_csv(std::ostream& out, const Schedule& schedule, const SimResult& result);
void write_links_csv(std::ostream& out, const topo::Topology& topology, const SimResult& result);
nlohmann::json simulation_summary_json(const Schedule& schedule, const topo::Topology& topology,
                                       const SimResult& result, bool per_gpu);

}  // namespace tessera::sim
