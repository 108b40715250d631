#include "schedule_view.hpp"

#include "tessera/core/data_size.hpp"
#include "tessera/core/error.hpp"
#include "tessera/scenario/report_json.hpp"
#include "tessera/schedules/schedule_json.hpp"
#include "to_python.hpp"

namespace tessera::python {

namespace py = pybind11;
using nlohmann::json;

ScheduleView::ScheduleView(scenario::Scenario scenario, scenario::Evaluation evaluation)
    : scenario_(std::move(scenario)), evaluation_(std::move(evaluation)) {}

const json& ScheduleView::form() const {
  if (!form_) form_ = std::make_unique<json>(schedules::schedule_to_json(schedule()));
  return *form_;
}

py::object ScheduleView::json_form() const { return to_python(form()); }

py::list ScheduleView::ops() const {
  py::list ops;
  size_t index = 0;
  for (const json& op : form().at("ops")) {
    py::dict entry = to_python(op);
    entry["index"] = index++;
    ops.append(entry);
  }
  return ops;
}

py::list ScheduleView::blocks() const {
  py::list blocks;
  size_t index = 0;
  for (const json& op : form().at("ops")) {
    if (op.at("op") == "compute") {
      for (const json& block : op.at("blocks")) {  // [head_group, q_chunk, kv_chunk]
        py::dict entry;
        entry["op"] = index;
        entry["gpu"] = op.at("gpu").get<int64_t>();
        entry["pass"] = op.at("pass").get<std::string>();
        entry["head_group"] = block.at(0).get<int64_t>();
        entry["q_chunk"] = block.at(1).get<int64_t>();
        entry["kv_chunk"] = block.at(2).get<int64_t>();
        blocks.append(entry);
      }
    }
    ++index;
  }
  return blocks;
}

namespace {
// The bytes of a list of [kind, head_group, chunk] items (core/data_size.hpp).
int64_t items_bytes(const Schedule& schedule, const BlockGrid& grid, const json& items) {
  int64_t bytes = 0;
  for (const json& item : items) {
    DataItem data;
    if (!parse_data_kind(item.at(0).get<std::string>(), data.kind)) throw UserError("unknown data kind in a schedule");
    data.head_group = item.at(1).get<int32_t>();
    data.chunk = item.at(2).get<int32_t>();
    bytes += item_bytes(schedule, grid, data);
  }
  return bytes;
}
}  // namespace

py::list ScheduleView::transfers() const {
  const BlockGrid& grid = evaluation_.checked.grid();
  py::list transfers;
  // Point-to-point: each send names its receiver (and pairs with the matching recv there).
  size_t index = 0;
  for (const json& op : form().at("ops")) {
    if (op.at("op") == "send") {
      py::dict entry;
      entry["src"] = op.at("gpu").get<int64_t>();
      entry["dst"] = op.at("peer").get<int64_t>();
      entry["pass"] = op.at("pass").get<std::string>();
      entry["kind"] = "send";
      entry["op"] = index;
      entry["collective"] = py::none();
      entry["items"] = to_python(op.at("items"));
      entry["bytes"] = items_bytes(schedule(), grid, op.at("items"));
      transfers.append(entry);
    }
    ++index;
  }
  size_t collective_index = 0;
  for (const json& collective : form().at("collectives")) {
    for (const json& transfer : collective.at("transfers")) {
      py::dict entry;
      entry["src"] = transfer.at("src").get<int64_t>();
      entry["dst"] = transfer.at("dst").get<int64_t>();
      entry["pass"] = collective.at("pass").get<std::string>();
      entry["kind"] = collective.at("kind").get<std::string>();
      entry["op"] = py::none();
      entry["collective"] = collective_index;
      entry["items"] = to_python(transfer.at("items"));
      entry["bytes"] = items_bytes(schedule(), grid, transfer.at("items"));
      transfers.append(entry);
    }
    ++collective_index;
  }
  return transfers;
}

py::list ScheduleView::collectives() const { return to_python(form().at("collectives")); }

py::object ScheduleView::cost() const { return to_python(scenario::cost_to_json(evaluation_, scenario_, true)); }

void ScheduleView::save(const std::string& path) const { schedules::write_schedule_file(schedule(), path); }

void bind_schedule_view(py::module_& module) {
  py::class_<ScheduleView>(module, "Schedule",
                           "One generated, checked and evaluated schedule (tessera.schedule(...)). Its ops, blocks, "
                           "transfers and collectives are lists of dicts; cost is the cost report with per-GPU rows.")
      .def_property_readonly("name", [](const ScheduleView& view) { return view.schedule().name(); })
      .def_property_readonly("algorithm", [](const ScheduleView& view) { return view.schedule().algorithm; })
      .def_property_readonly("variant", [](const ScheduleView& view) { return view.schedule().variant; })
      .def_property_readonly("gpus", [](const ScheduleView& view) { return view.schedule().gpus; })
      .def_property_readonly("head_groups", [](const ScheduleView& view) { return view.schedule().head_groups; })
      .def_property_readonly("layout", [](const ScheduleView& view) { return to_string(view.schedule().layout); })
      .def_property_readonly("tile", [](const ScheduleView& view) -> py::object {
        if (!view.schedule().tile) return py::none();
        return py::str(to_string(*view.schedule().tile));
      })
      .def_property_readonly("problem", [](const ScheduleView& view) {
        return to_python(schedules::problem_to_json(view.schedule().problem));
      })
      .def_property_readonly("streams", [](const ScheduleView& view) { return view.schedule().stream_names; })
      .def_property_readonly("ops", &ScheduleView::ops, "one dict per op in program order (the JSON form's ops, with index)")
      .def_property_readonly("blocks", &ScheduleView::blocks,
                             "one dict per computed block: op, gpu, pass, head_group, q_chunk, kv_chunk")
      .def_property_readonly("transfers", &ScheduleView::transfers,
                             "one dict per transfer: src, dst, pass, kind (send or the collective's), op (a send's "
                             "index) or collective (its index), items ([kind, head_group, chunk]), bytes")
      .def_property_readonly("collectives", &ScheduleView::collectives)
      .def_property_readonly("cost", &ScheduleView::cost, "the cost report (tessera cost --json --per-gpu)")
      .def_property_readonly("per_gpu", [](const ScheduleView& view) { return py::object(view.cost()["per_gpu"]); },
                             "one dict per GPU: recv_bytes, sent_bytes, flops, peak_memory_bytes, compute_s, comm_s, finish_s, ...")
      .def("to_json", &ScheduleView::json_form, "the schedule's JSON form (tessera schedule) as Python objects")
      .def("save", &ScheduleView::save, py::arg("path"), "writes the JSON form to a file (tessera check reads it)")
      .def("__repr__", [](const ScheduleView& view) {
        return "<tessera.Schedule " + view.schedule().name() + " on " + std::to_string(view.schedule().gpus) + " GPUs, " +
               std::to_string(view.schedule().ops.size()) + " ops>";
      });
}

}  // namespace tessera::python
