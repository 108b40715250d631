#pragma once
// JSON views of cost reports, shared by the command line, the experiments and the GUI.
#include <nlohmann/json.hpp>

#include "tessera/costmodel/cost.hpp"

namespace tessera::costmodel {

nlohmann::json hardware_to_json(const Hardware& hardware);
// Keys: recv_bytes_max, recv_bytes_by_kind (mean per GPU), flops_max, peak_memory_bytes_max,
// time_s, ... (see the implementation for the full list). per_gpu adds one entry per GPU.
nlohmann::json cost_report_to_json(const Schedule& schedule, const CostReport& report, bool per_gpu);

}  // namespace tessera::costmodel
