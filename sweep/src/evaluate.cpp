#include "tessera/sweep/evaluate.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "tessera/core/error.hpp"
#include "tessera/scenario/evaluate.hpp"
#include "tessera/scenario/scenario.hpp"

namespace tessera::sweep {

namespace {

// The metric columns, in row order after the inputs.
enum Metric : size_t {  // plain enum: the names index the row
  status, schedule, time_s, analytic_time_s, simulated_time_s, compute_s_max, comm_s_max, recv_bytes_max,
  recv_bytes_mean, recv_kind_first,  // one column per DataKind follows
  flops_max = recv_kind_first + kDataKindCount, flops_total, peak_memory_bytes_max, bytes_per_flop, comm_over_compute,
  lower_bound_bytes, lower_bound_ratio, busiest_link_bytes, inter_node_bytes, sim_compute_s_max, sim_comm_s_max,
  sim_exposed_wait_s_max, sim_lower_bound_s, sim_transfers,
  // The time bound of lower_bound.hpp: against time_s (the row's model), and the alpha-beta one.
  lower_bound_time_s, time_over_lower_bound, analytic_lower_bound_time_s, metric_count
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::vector<Column> make_columns() {
  std::vector<Column> columns;
  columns.push_back({"index", true});
  for (int field = 0; field < kFieldCount; ++field) {
    const auto f = static_cast<Field>(field);
    const bool numeric = f == Field::gpus || f == Field::peak_tflops || f == Field::efficiency || f == Field::hbm_gbps ||
                         f == Field::bandwidth_gbps || f == Field::latency_us || f == Field::channels ||
                         f == Field::overhead_us;
    columns.push_back({field_name(f), numeric});
  }
  columns.push_back({"seq_tokens", true});
  std::vector<std::string> metrics = {"status",         "schedule",        "time_s",         "analytic_time_s",
                                      "simulated_time_s", "compute_s_max", "comm_s_max",     "recv_bytes_max",
                                      "recv_bytes_mean"};
  for (int kind = 0; kind < kDataKindCount; ++kind)
    metrics.push_back("recv_" + lower(to_string(static_cast<DataKind>(kind))) + "_bytes_mean");
  for (const char* name : {"flops_max", "flops_total", "peak_memory_bytes_max", "bytes_per_flop", "comm_over_compute",
                           "lower_bound_bytes", "lower_bound_ratio", "busiest_link_bytes", "inter_node_bytes",
                           "sim_compute_s_max", "sim_comm_s_max", "sim_exposed_wait_s_max", "sim_lower_bound_s",
                           "sim_transfers", "lower_bound_time_s", "time_over_lower_bound",
                           "analytic_lower_bound_time_s"})
    metrics.push_back(name);
  for (const std::string& name : metrics) columns.push_back({name, name != "status" && name != "schedule"});
  return columns;
}

constexpr size_t kFirstMetric = 1 + kFieldCount + 1;

const std::string& at(const PointValues& values, Field field) { return values[static_cast<size_t>(field)]; }

double number(const std::string& text) { return std::stod(text); }

// One line, no control characters: a cell never breaks a row.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return text;
}

}  // namespace

const std::vector<Column>& result_columns() {
  static const std::vector<Column> columns = make_columns();
  return columns;
}

size_t column_index(const std::string& name) {
  const auto& columns = result_columns();
  for (size_t index = 0; index < columns.size(); ++index)
    if (columns[index].name == name) return index;
  std::string list;
  for (const auto& column : columns) list += (list.empty() ? "" : ", ") + column.name;
  throw UserError("unknown column '" + name + "' (expected one of: " + list + ")");
}

size_t status_column() { return kFirstMetric + status; }

std::string format_number(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::shared_ptr<const topo::Topology> Evaluator::topology(const std::string& name, int32_t gpus) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = topologies_.find({name, gpus});
    if (it != topologies_.end()) return it->second;
  }
  auto built = std::make_shared<const topo::Topology>(topo::load_topology(name, gpus));  // outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  return topologies_.try_emplace({name, gpus}, built).first->second;
}

Row Evaluator::evaluate_safely(size_t index, const PointValues& values) noexcept {
  std::string message;
  try {
    return evaluate(index, values);
  } catch (const std::exception& error) {
    message = error.what();
  } catch (...) {
    message = "an unknown exception";
  }
  // Building the row may fail too when memory is short; then noexcept ends the process, as
  // any allocation failure outside a point would.
  Row row(result_columns().size());
  row[0] = std::to_string(index);
  for (size_t field = 0; field < values.size(); ++field) row[1 + field] = values[field];
  row[status_column()] = one_line("error: " + message);
  return row;
}

Row Evaluator::evaluate(size_t index, const PointValues& values) {
  Row row(result_columns().size());
  row[0] = std::to_string(index);
  for (size_t field = 0; field < values.size(); ++field) row[1 + field] = values[field];
  auto metric = [&](Metric which) -> std::string& { return row[kFirstMetric + which]; };
  auto put = [&](Metric which, double value) { metric(which) = format_number(value); };
  try {
    row[1 + kFieldCount] = std::to_string(parse_count(at(values, Field::seq)));
  } catch (const UserError&) {
  }

  const scenario::ProblemText problem_text = sweep::problem_text(values);
  scenario::ScheduleText schedule_text;
  schedule_text.algorithm = at(values, Field::algo);
  schedule_text.tile = at(values, Field::tile);
  schedule_text.variant = at(values, Field::variant);

  // Stage 1: the problem and the schedule. A refusal means the schedule does not apply.
  scenario::Scenario scenario;
  scenario.algorithm = schedule_text.algorithm;
  scenario.figures_only = true;  // a row holds figures
  std::optional<schedules::CheckedSchedule> checked;
  auto refuse = [&](auto&& step) {
    try {
      step();
      return false;
    } catch (const UserError& error) {
      metric(status) = one_line("skipped: " + std::string(error.what()));
    } catch (const std::exception& error) {
      metric(status) = one_line("error: " + std::string(error.what()));
    }
    return true;
  };
  auto fail = [&](auto&& step) {
    try {
      step();
      return false;
    } catch (const std::exception& error) {
      for (size_t column = kFirstMetric; column < row.size(); ++column) row[column].clear();
      metric(status) = one_line("error: " + std::string(error.what()));
    }
    return true;
  };
  if (refuse([&] {
        scenario.problem = scenario::make_problem(problem_text);
        scenario.options = scenario::make_options(problem_text, schedule_text);
        schedules::require_tokens_per_gpu(scenario.problem, scenario.options.gpus);
        const schedules::GeneratorOptions& options = scenario.options;
        if (options.tile && options.tile->first * options.tile->second != options.gpus)
          throw UserError("tile " + to_string(*options.tile) + " does not divide " +
                          std::to_string(options.gpus) + " GPUs");
      }))
    return row;
  // The machine: errors here are errors of the point.
  if (fail([&] {
        scenario::HardwareValues hardware_values;
        hardware_values.peak_tflops = number(at(values, Field::peak_tflops));
        hardware_values.efficiency = number(at(values, Field::efficiency));
        hardware_values.hbm_gbps = number(at(values, Field::hbm_gbps));
        hardware_values.bandwidth_gbps = number(at(values, Field::bandwidth_gbps));
        hardware_values.latency_us = number(at(values, Field::latency_us));
        hardware_values.overhead_us = number(at(values, Field::overhead_us));
        scenario.hardware = scenario::make_hardware(hardware_values);
        const std::string& topology_name = at(values, Field::topology);
        if (!topology_name.empty()) scenario.network.topology = this->topology(topology_name, scenario.options.gpus);
        scenario.network.placement = at(values, Field::placement);
        const std::string& fidelity = at(values, Field::fidelity);
        if (fidelity != "analytic") {
          scenario::SimulationText simulation{at(values, Field::gpu), "", fidelity, 0, at(values, Field::chunk)};
          simulation.channels = static_cast<int32_t>(number(at(values, Field::channels)));
          scenario.simulation = scenario::make_simulation(simulation, scenario.hardware);
        }
      }))
    return row;
  if (refuse([&] { checked = scenario::generate(scenario, &schedules_); })) return row;

  // Stage 2: cost and simulate. Failures here are errors of the point, not refusals.
  try {
    const scenario::Evaluation evaluation = scenario::evaluate(*checked, scenario);
    const costmodel::CostReport& report = evaluation.figures.cost;
    metric(Metric::schedule) = one_line(evaluation.schedule().name());
    if (const auto& network = evaluation.figures.network) {
      put(busiest_link_bytes, static_cast<double>(network->loads.busiest_edge_bytes));
      put(inter_node_bytes, static_cast<double>(network->loads.inter_node_total()));
    }
    put(analytic_time_s, report.time_s);
    put(compute_s_max, report.compute_s_max);
    put(comm_s_max, report.comm_s_max);
    put(recv_bytes_max, static_cast<double>(report.recv_bytes_max));
    double mean = 0;
    for (int kind = 0; kind < kDataKindCount; ++kind) {
      const double bytes = report.recv_bytes_mean_by_kind[static_cast<size_t>(kind)];
      mean += bytes;
      put(static_cast<Metric>(recv_kind_first + static_cast<size_t>(kind)), bytes);
    }
    put(recv_bytes_mean, mean);
    put(flops_max, report.flops_max);
    put(flops_total, report.flops_total);
    put(peak_memory_bytes_max, static_cast<double>(report.peak_memory_bytes_max));
    put(bytes_per_flop, report.bytes_per_flop);
    put(comm_over_compute, report.comm_over_compute);
    put(lower_bound_bytes, report.lower_bound.total_bytes());
    put(lower_bound_ratio, report.lower_bound_ratio);
    put(analytic_lower_bound_time_s, report.lower_bound_time.total_s());

    if (!evaluation.simulation) {
      put(time_s, report.time_s);
      put(lower_bound_time_s, report.lower_bound_time.total_s());
      put(time_over_lower_bound, report.time_over_lower_bound);
    } else {
      const sim::SimResult& result = *evaluation.simulation;
      double compute = 0, communication = 0, wait = 0;
      for (const sim::GpuTimes& times : result.gpus) {
        compute = std::max(compute, times.compute_s);
        communication = std::max(communication, times.communication_s);
        wait = std::max(wait, times.exposed_wait_s);
      }
      put(simulated_time_s, result.makespan_s);
      put(time_s, result.makespan_s);
      put(sim_compute_s_max, compute);
      put(sim_comm_s_max, communication);
      put(sim_exposed_wait_s_max, wait);
      put(sim_lower_bound_s, result.lower_bound_s);
      put(sim_transfers, static_cast<double>(result.transfers));
      put(lower_bound_time_s, evaluation.figures.simulated_bound->total_s());
      put(time_over_lower_bound, evaluation.figures.time_over_bound());
    }
    metric(status) = "ok";
  } catch (const std::exception& error) {
    for (size_t column = kFirstMetric; column < row.size(); ++column) row[column].clear();
    metric(status) = one_line("error: " + std::string(error.what()));
  }
  return row;
}

}  // namespace tessera::sweep
