#include "fields.hpp"

#include <functional>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/scenario/field_rules.hpp"

namespace tessera::python {

namespace py = pybind11;

namespace {

std::string type_name(py::handle value) { return py::str(py::type::of(value).attr("__name__")).cast<std::string>(); }

// A flag's text: a str as it is; an integer (int, numpy's too) or a float as Python writes it.
std::string text_value(py::handle value, const std::string& flag) {
  if (py::isinstance<py::bool_>(value)) throw UserError(flag + ": expected text or a number, got a bool");
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (PyIndex_Check(value.ptr())) return py::str(py::int_(py::reinterpret_borrow<py::object>(value))).cast<std::string>();
  if (PyFloat_Check(value.ptr())) return py::str(value).cast<std::string>();
  throw UserError(flag + ": expected text or a number, got a " + type_name(value));
}

// --documents: a list of lengths too, joined as the flag takes them (512K,512K).
std::string lengths_value(py::handle value, const std::string& flag) {
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value)) return text_value(value, flag);
  std::string text;
  for (py::handle length : value) text += (text.empty() ? "" : ",") + text_value(length, flag);
  return text;
}

double number_value(py::handle value, const std::string& flag) {
  if (!py::isinstance<py::bool_>(value) && (PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr())))
    return py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
  throw UserError(flag + ": expected a number, got " +
                  (py::isinstance<py::str>(value) ? tessera::quoted(value.cast<std::string>()) : "a " + type_name(value)));
}

int64_t whole_value(py::handle value, const std::string& flag) {
  if (!py::isinstance<py::bool_>(value) && PyIndex_Check(value.ptr())) {
    const py::int_ whole(py::reinterpret_borrow<py::object>(value));
    if (whole >= py::int_(-(int64_t{1} << 31)) && whole <= py::int_(int64_t{1} << 31)) return whole.cast<int64_t>();
  }
  throw UserError(flag + ": expected a whole number, got " +
                  (py::isinstance<py::str>(value) ? tessera::quoted(value.cast<std::string>()) : py::repr(value).cast<std::string>()));
}

bool bool_value(py::handle value, const std::string& flag) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  throw UserError(flag + ": expected True or False, got " + py::repr(value).cast<std::string>());
}

using Setter = std::function<void(Fields&, py::handle, const std::string& flag)>;
struct Field {
  const char* name;  // the keyword; the flag is "--" + name with dashes
  unsigned groups;
  Setter set;
};


template <typename Group>
Setter text_in(Group Fields::*group, std::string Group::*member) {
  return [group, member](Fields& fields, py::handle value, const std::string& flag) {
    fields.*group.*member = text_value(value, flag);
  };
}
template <typename Group>
Setter number_in(Group Fields::*group, double Group::*member) {
  return [group, member](Fields& fields, py::handle value, const std::string& flag) {
    fields.*group.*member = number_value(value, flag);
  };
}

const std::vector<Field>& field_table() {
  using scenario::HardwareValues;
  using scenario::NetworkText;
  using scenario::ProblemText;
  using scenario::ScheduleText;
  using scenario::SimulationText;
  static const std::vector<Field> table = {
      {"gpus", kProblemFields, text_in(&Fields::problem, &ProblemText::gpus)},
      {"seq", kProblemFields, text_in(&Fields::problem, &ProblemText::seq)},
      {"batch", kProblemFields, text_in(&Fields::problem, &ProblemText::batch)},
      {"heads", kProblemFields, text_in(&Fields::problem, &ProblemText::heads)},
      {"kv_heads", kProblemFields, text_in(&Fields::problem, &ProblemText::kv_heads)},
      {"head_dim", kProblemFields, text_in(&Fields::problem, &ProblemText::head_dim)},
      {"head_dim_v", kProblemFields, text_in(&Fields::problem, &ProblemText::head_dim_v)},
      {"dtype", kProblemFields, text_in(&Fields::problem, &ProblemText::dtype)},
      {"mask", kProblemFields, text_in(&Fields::problem, &ProblemText::mask)},
      {"window", kProblemFields, text_in(&Fields::problem, &ProblemText::window)},
      {"documents", kProblemFields,
       [](Fields& fields, py::handle value, const std::string& flag) { fields.problem.documents = lengths_value(value, flag); }},
      {"layout", kProblemFields, text_in(&Fields::problem, &ProblemText::layout)},
      {"pass", kProblemFields, text_in(&Fields::problem, &ProblemText::pass)},
      {"buffers", kProblemFields, text_in(&Fields::problem, &ProblemText::buffers)},
      {"algo", kScheduleFields, text_in(&Fields::schedule, &ScheduleText::algorithm)},
      {"tile", kScheduleFields, text_in(&Fields::schedule, &ScheduleText::tile)},
      {"variant", kScheduleFields, text_in(&Fields::schedule, &ScheduleText::variant)},
      {"input", kScheduleFields, text_in(&Fields::schedule, &ScheduleText::input)},
      {"peak_tflops", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::peak_tflops)},
      {"efficiency", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::efficiency)},
      {"hbm_bandwidth", kHardwareFields, text_in(&Fields::hardware, &HardwareValues::hbm_bandwidth)},
      {"bandwidth", kHardwareFields, text_in(&Fields::hardware, &HardwareValues::bandwidth)},
      {"hbm_gbps", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::hbm_gbps)},
      {"bandwidth_gbps", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::bandwidth_gbps)},
      {"latency_us", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::latency_us)},
      {"launch_us", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::launch_us)},
      {"overhead_us", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::overhead_us)},
      {"nvlink_message_us", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::nvlink_message_us)},
      {"network_message_us", kHardwareFields, number_in(&Fields::hardware, &HardwareValues::network_message_us)},
      {"topology", kNetworkFields, text_in(&Fields::network, &NetworkText::topology)},
      {"placement", kNetworkFields, text_in(&Fields::network, &NetworkText::placement)},
      {"routing", kNetworkFields, text_in(&Fields::network, &NetworkText::routing)},
      {"fidelity", kSimulateFields,
       [](Fields& fields, py::handle value, const std::string& flag) {
         fields.simulation.fidelity = fields.collective.fidelity = text_value(value, flag);
       }},
      {"gpu", kSimulateFields | kPlanFields, text_in(&Fields::simulation, &SimulationText::gpu)},
      {"calibration", kSimulateFields, text_in(&Fields::simulation, &SimulationText::calibration)},
      {"channels", kSimulateFields,
       [](Fields& fields, py::handle value, const std::string& flag) {
         fields.simulation.channels = static_cast<int32_t>(whole_value(value, flag));
       }},
      {"chunk", kSimulateFields, text_in(&Fields::simulation, &SimulationText::chunk)},
      {"collective", kSimulateFields, text_in(&Fields::collective, &scenario::CollectiveText::collective)},
      {"algorithm", kSimulateFields, text_in(&Fields::collective, &scenario::CollectiveText::algorithm)},
      {"size", kSimulateFields, text_in(&Fields::collective, &scenario::CollectiveText::size)},
      {"model", kPlanFields,
       [](Fields& fields, py::handle value, const std::string& flag) { fields.model = text_value(value, flag); }},
      {"top", kPlanFields,
       [](Fields& fields, py::handle value, const std::string& flag) { fields.top = whole_value(value, flag); }},
      {"exhaustive", kPlanFields,
       [](Fields& fields, py::handle value, const std::string& flag) { fields.exhaustive = bool_value(value, flag); }},
      {"per_gpu", kPerGpuField,
       [](Fields& fields, py::handle value, const std::string& flag) { fields.per_gpu = bool_value(value, flag); }},
  };
  return table;
}

}  // namespace

Fields read_fields(const py::kwargs& kwargs, unsigned groups, const char* function) {
  Fields fields;
  for (const auto& [key, value] : kwargs) {
    std::string name = py::str(key).cast<std::string>();
    if (name == "pass_") name = "pass";  // `pass` is a Python keyword
    const Field* field = nullptr;
    for (const Field& candidate : field_table())
      if (name == candidate.name && (candidate.groups & groups) != 0) field = &candidate;
    if (field == nullptr)
      throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" +
                           py::str(key).cast<std::string>() + "'");
    std::string flag = "--" + name;
    for (char& c : flag)
      if (c == '_') c = '-';
    field->set(fields, value, flag);
    fields.given.insert(flag);
  }
  scenario::FieldRequest request;
  request.command = function;
  request.given = [&fields](const char* flag) { return fields.given.count(flag) > 0; };
  request.value = [&fields](const char* flag) -> std::string {
    const std::string name = flag;
    if (name == "--algo") return fields.schedule.algorithm;
    if (name == "--mask") return fields.problem.mask;
    return "";
  };
  request.json = true;  // the functions return data: per_gpu needs nothing more
  request.model = fields.model;
  scenario::refuse_meaningless_fields(request);
  return fields;
}

}  // namespace tessera::python
