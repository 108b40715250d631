// The Python module tessera (built as tessera._tessera; python/tessera/__init__.py re-exports
// it). Each function reads the command line's fields from its keyword arguments (fields.hpp),
// goes through the scenario library as the matching command does (cli/commands.cpp,
// cli/simulate_command.cpp) and returns what that command's --json prints, as Python objects
// (scenario/report_json.hpp writes both). Bad input raises ValueError with the message the
// command line prints after "tessera: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "fields.hpp"
#include "schedule_view.hpp"
#include "tessera/core/error.hpp"
#include "tessera/scenario/plan.hpp"
#include "tessera/scenario/report_json.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/sweep/evaluate.hpp"
#include "tessera/sweep/results.hpp"
#include "to_python.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {

double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// A scenario of one schedule (cost, simulate, schedule): problem, options, hardware and
// network parsed in the command line's order, so the first bad field is the one it names.
scenario::Scenario schedule_scenario(const Fields& fields, const char* function) {
  if (fields.schedule.algorithm.empty()) throw UserError(std::string(function) + " needs --algo (the algo keyword)");
  scenario::Scenario scenario{fields.schedule.algorithm, scenario::make_problem(fields.problem),
                              scenario::make_options(fields.problem, fields.schedule),
                              scenario::make_hardware(fields.hardware), {}, std::nullopt};
  return scenario;
}

py::object cost(const py::kwargs& kwargs) {
  const Fields fields =
      read_fields(kwargs, kProblemFields | kScheduleFields | kHardwareFields | kNetworkFields | kPerGpuField, "cost");
  nlohmann::json out;
  {
    py::gil_scoped_release release;
    scenario::Scenario scenario = schedule_scenario(fields, "cost");
    scenario.network = scenario::make_network(fields.network, scenario.options.gpus);
    scenario.figures_only = true;
    out = scenario::cost_to_json(scenario::evaluate(scenario), scenario, fields.per_gpu);
  }
  return to_python(out);
}

py::object plan(const py::kwargs& kwargs) {
  const Fields fields =
      read_fields(kwargs, kProblemFields | kHardwareFields | kNetworkFields | kPlanFields | kPerGpuField, "plan");
  nlohmann::json out;
  {
    py::gil_scoped_release release;
    scenario::Scenario base{"", scenario::make_problem(fields.problem),
                            scenario::make_options(fields.problem, scenario::ScheduleText{}),
                            scenario::make_hardware(fields.hardware), {}, std::nullopt};
    base.network = scenario::make_network(fields.network, base.options.gpus);
    if (fields.model == "flow")
      base.simulation =
          scenario::make_simulation(scenario::SimulationText{fields.simulation.gpu, "", "flow", 0, ""}, base.hardware);
    else if (fields.model != "analytic")
      throw UserError("--model: '" + fields.model + "' is not one of flow, analytic");
    if (fields.top < 0) throw UserError("--top: expected a number of schedules (0: all), got " + std::to_string(fields.top));
    scenario::PlanControl control;
    control.exhaustive = fields.exhaustive;
    out = scenario::plan_to_json(base, scenario::plan(base, control), static_cast<size_t>(fields.top), fields.per_gpu);
  }
  return to_python(out);
}

py::object simulate(const py::kwargs& kwargs) {
  const Fields fields = read_fields(
      kwargs, kProblemFields | kScheduleFields | kHardwareFields | kNetworkFields | kSimulateFields | kPerGpuField,
      "simulate");
  nlohmann::json out;
  {
    py::gil_scoped_release release;
    const auto started = std::chrono::steady_clock::now();
    if (!fields.collective.collective.empty()) {
      const int32_t gpus = scenario::gpu_count(fields.problem);
      const scenario::CollectiveEvaluation evaluation = scenario::evaluate_collective(
          fields.collective, gpus, scenario::make_network(fields.network, gpus), scenario::make_hardware(fields.hardware));
      out = scenario::collective_to_json(evaluation, fields.collective);
      out["wall_s"] = seconds_since(started);
    } else {
      if (fields.schedule.algorithm.empty())
        throw UserError("simulate needs --algo (a schedule) or --collective (a standalone collective)");
      scenario::Scenario scenario = schedule_scenario(fields, "simulate");
      scenario.simulation = scenario::make_simulation(fields.simulation, scenario.hardware);
      scenario.network = scenario::make_network(fields.network, scenario.options.gpus);
      const scenario::Evaluation evaluation = scenario::evaluate(scenario);
      const double wall_s = seconds_since(started);
      out = scenario::simulation_to_json(evaluation, scenario, fields.per_gpu);
      out["wall_s"] = wall_s;
      out["events_per_s"] = wall_s > 0 ? static_cast<double>(evaluation.simulation->events) / wall_s : 0;
    }
  }
  return to_python(out);
}

ScheduleView schedule(const py::kwargs& kwargs) {
  const Fields fields =
      read_fields(kwargs, kProblemFields | kScheduleFields | kHardwareFields | kNetworkFields, "schedule");
  py::gil_scoped_release release;
  scenario::Scenario scenario = schedule_scenario(fields, "schedule");
  scenario.network = scenario::make_network(fields.network, scenario.options.gpus);
  scenario::Evaluation evaluation = scenario::evaluate(scenario);
  return ScheduleView(std::move(scenario), std::move(evaluation));
}

// A results cell as Python: numeric columns (sweep/evaluate.hpp's result_columns) as int or
// float, an empty cell as None, any other cell as its text.
py::object cell(const std::string& text, bool numeric) {
  if (text.empty()) return py::none();
  if (numeric) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size()) {
      if (std::abs(value) < 9e15 && value == std::floor(value)) return py::int_(static_cast<int64_t>(value));
      return py::float_(value);
    }
  }
  return py::str(text);
}

py::list read_results(const std::string& path) {
  const std::string file =
      std::filesystem::is_directory(path) ? (std::filesystem::path(path) / "results.csv").string() : path;
  const sweep::Table table = sweep::read_csv(file);
  std::vector<bool> numeric;
  for (const std::string& name : table.columns) {
    bool is_numeric = false;
    for (const sweep::Column& column : sweep::result_columns()) is_numeric = is_numeric || (column.name == name && column.numeric);
    numeric.push_back(is_numeric);
  }
  py::list rows;
  for (const auto& row : table.rows) {
    py::dict entry;
    for (size_t index = 0; index < table.columns.size(); ++index)
      entry[py::str(table.columns[index])] = cell(row[index], numeric[index]);
    rows.append(entry);
  }
  return rows;
}

py::list list_schedules() {
  py::list list;
  for (const auto& info : schedules::list_generators()) {
    py::dict entry;
    entry["name"] = info.name;
    entry["summary"] = info.summary;
    list.append(entry);
  }
  return list;
}

}  // namespace

}  // namespace tessera::python

PYBIND11_MODULE(_tessera, module) {
  using namespace tessera::python;
  module.doc() = "Tessera: plan, cost, simulate and inspect distributed attention schedules (see README: Python).";
  module.attr("__version__") = TESSERA_VERSION;
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const tessera::UserError& user_error) {
      PyErr_SetString(PyExc_ValueError, user_error.what());
    } catch (const tessera::schedules::InvalidSchedule& invalid) {
      PyErr_SetString(PyExc_ValueError, invalid.what());
    }
  });
  bind_schedule_view(module);
  module.def("cost", &cost,
             "cost(**fields) -> dict: one schedule's cost, as `tessera cost --json` (algo required; fields are the "
             "command's flags, e.g. gpus=64, seq='1M', algo='mesh', tile='8x8', bandwidth='400Gb/s', per_gpu=True)");
  module.def("plan", &plan,
             "plan(**fields) -> dict: every applicable schedule ranked, as `tessera plan --json` (model='flow' or "
             "'analytic', gpu, top, exhaustive=True to price every candidate, and the problem, hardware and network fields)");
  module.def("simulate", &simulate,
             "simulate(**fields) -> dict: one schedule through the simulator, as `tessera simulate --json` (or a "
             "standalone collective='all-reduce', size='1G', ...)");
  module.def("schedule", &schedule,
             "schedule(**fields) -> Schedule: the schedule cost() prices, to inspect (ops, blocks, transfers, per_gpu)");
  module.def("read_results", &read_results, py::arg("path"),
             "read_results(path) -> list of dicts: a sweep's results (DIR or DIR/results.csv), numbers as numbers, "
             "empty cells as None");
  module.def("schedules", &list_schedules, "schedules() -> list of dicts: the schedule generators (name, summary)");
}
