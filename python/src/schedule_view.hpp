#pragma once
// tessera.Schedule: one evaluated schedule, to inspect from Python. Its ops, collectives and
// identity come from the schedule's JSON form (schedules/schedule_json.hpp: the same fields as
// `tessera schedule` writes); its blocks and transfers are those ops flattened one row per
// block and one row per transfer (with its bytes); its figures are the evaluation's cost
// report with the per-GPU rows (`tessera cost --json --per-gpu`).
#include <memory>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "tessera/scenario/evaluate.hpp"

namespace tessera::python {

class ScheduleView {
 public:
  ScheduleView(scenario::Scenario scenario, scenario::Evaluation evaluation);

  const Schedule& schedule() const { return evaluation_.schedule(); }
  pybind11::object json_form() const;  // the whole JSON form as Python objects
  pybind11::list ops() const;          // one dict per op, in program order, with its "index"
  pybind11::list blocks() const;       // one dict per computed block: op, gpu, pass, head_group, q_chunk, kv_chunk
  pybind11::list transfers() const;    // one dict per transfer: src, dst, pass, kind, op or collective, items, bytes
  pybind11::list collectives() const;
  pybind11::object cost() const;       // the cost report with "per_gpu"
  void save(const std::string& path) const;

 private:
  const nlohmann::json& form() const;  // built on first use: a large schedule's form is large
  scenario::Scenario scenario_;
  scenario::Evaluation evaluation_;
  mutable std::unique_ptr<nlohmann::json> form_;
};

void bind_schedule_view(pybind11::module_& module);

}  // namespace tessera::python
