#pragma once
// Keyword arguments into the scenario's text fields: each keyword is a command-line flag with
// underscores for dashes (kv_heads is --kv-heads; pass_ or pass is --pass), its value the text
// the flag would take (a str, or an int or float written as Python writes it; documents also a
// list of lengths). The scenario library parses and checks the text exactly as it does the
// command line's, so an error names the flag as the CLI does. A keyword the function does not
// take raises TypeError, as for any Python function; a value of a type no flag takes raises
// ValueError naming the flag.
#include <cstdint>
#include <set>
#include <string>

#include <pybind11/pybind11.h>

#include "tessera/scenario/collective.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/scenario/scenario.hpp"
#include "tessera/scenario/simulation.hpp"

namespace tessera::python {

// The groups of fields a function takes, as the command's flags (cli/main.cpp).
enum FieldGroup : unsigned {
  kProblemFields = 1u << 0,     // gpus, seq, batch, heads, kv_heads, head_dim, ..., buffers
  kScheduleFields = 1u << 1,    // algo, tile, variant, input
  kHardwareFields = 1u << 2,    // peak_tflops, efficiency, bandwidth, latency_us, ...
  kNetworkFields = 1u << 3,     // topology, placement, routing
  kSimulateFields = 1u << 4,    // fidelity, gpu, calibration, channels, chunk, collective, algorithm, size
  kPlanFields = 1u << 5,        // model, gpu, top, exhaustive
  kPerGpuField = 1u << 6,       // per_gpu
};

struct Fields {
  scenario::ProblemText problem;
  scenario::ScheduleText schedule;
  scenario::HardwareValues hardware;
  scenario::NetworkText network;
  scenario::SimulationText simulation;
  scenario::CollectiveText collective;
  std::string model = "flow";  // plan: rank by the flow simulation or the analytic model
  int64_t top = 0;             // plan: the best N (0: all)
  bool exhaustive = false;     // plan: price every candidate, none set aside by its floor
  bool per_gpu = false;
  std::set<std::string> given;  // the flags given ("--kv-heads"), for the rules of scenario/field_rules.hpp
};

// Reads `kwargs` for `function` (its name, for TypeError and the command whose rules apply)
// taking the fields of `groups`, then refuses fields that mean nothing together as the command
// line does (scenario/field_rules.hpp: `bandwidth` with `topology`, `window` without a
// sliding-window mask, ...).
Fields read_fields(const pybind11::kwargs& kwargs, unsigned groups, const char* function);

}  // namespace tessera::python
