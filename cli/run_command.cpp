#include "run_command.hpp"

#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "problem_flags.hpp"
#include "table.hpp"
#include "tessera/backend/cpu_executor.hpp"
#include "tessera/core/error.hpp"

namespace tessera::cli {

namespace {
// The CPU reference executor works on every (query, key) pair: keep its runs to test sizes.
constexpr double kMaxPairWork = 4e10;
}  // namespace

int run_execute(const ProblemFlags& problem_flags, const ScheduleFlags& schedule_flags, const RunFlags& flags,
                const CommonFlags& common) {
  if (flags.backend == "cuda") {
    // No CUDA executor is built yet: say so plainly instead of pretending.
    std::cerr << "tessera: --backend cuda: this build has no CUDA executor (no GPU backend was built); "
                 "use --backend cpu\n";
    return 1;
  }
  if (flags.backend != "cpu") throw UserError("--backend: '" + flags.backend + "' is not one of cpu, cuda");
  Problem problem = make_problem(problem_flags);
  if (problem.batch != 1) throw UserError("--batch: the CPU executor runs one sequence (batch 1)");
  GeneratorOptions options = make_options(problem_flags, schedule_flags);
  CheckedSchedule checked = generate_checked(schedule_flags.algorithm, problem, options);
  const Schedule& schedule = checked.schedule;
  const Problem& run_problem = schedule.problem;
  const double work = static_cast<double>(run_problem.seq_len) * static_cast<double>(run_problem.seq_len) *
                      static_cast<double>(run_problem.heads) * static_cast<double>(run_problem.head_dim);
  if (work > kMaxPairWork)
    throw UserError("the CPU executor would need ~" + format_fixed(work / 1e9, 0) +
                    " G multiply-adds per pass; use a smaller --seq, --heads or --head-dim (e.g. --seq 4K)");

  backend::AttentionTensors inputs = backend::random_inputs(run_problem, flags.seed);
  backend::AttentionTensors reference = inputs;
  backend::dense_attention(run_problem, reference, run_problem.has_backward());
  // The same computation on one device at the same precision: the yardstick for the error.
  GeneratorOptions single_options = options;
  single_options.gpus = 1;
  single_options.tile.reset();
  CheckedSchedule single = generate_checked("ring", run_problem, single_options);

  auto execute = [&](const CheckedSchedule& what) {
    backend::AttentionTensors tensors = inputs;
    tensors.out = reference.out;
    tensors.lse = reference.lse;
    backend::execute_on_cpu(what.schedule, *what.grid, what.analysis, tensors);
    return tensors;
  };
  const auto started = std::chrono::steady_clock::now();
  backend::AttentionTensors distributed = execute(checked);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  backend::AttentionTensors one = execute(single);

  struct Row {
    const char* name;
    double error, single_error;
  };
  std::vector<Row> rows;
  if (run_problem.has_forward()) {
    rows.push_back({"O", backend::max_abs_error(distributed.out, reference.out), backend::max_abs_error(one.out, reference.out)});
    rows.push_back({"LSE", backend::max_abs_error(distributed.lse, reference.lse), backend::max_abs_error(one.lse, reference.lse)});
  }
  if (run_problem.has_backward()) {
    rows.push_back({"dQ", backend::max_abs_error(distributed.d_q, reference.d_q), backend::max_abs_error(one.d_q, reference.d_q)});
    rows.push_back({"dK", backend::max_abs_error(distributed.d_k, reference.d_k), backend::max_abs_error(one.d_k, reference.d_k)});
    rows.push_back({"dV", backend::max_abs_error(distributed.d_v, reference.d_v), backend::max_abs_error(one.d_v, reference.d_v)});
  }
  bool passed = true;
  for (const Row& row : rows) passed = passed && row.error <= 2 * std::max(row.single_error, 1e-6);

  if (common.json) {
    nlohmann::json errors = nlohmann::json::object();
    for (const Row& row : rows) errors[row.name] = {{"max_abs_error", row.error}, {"single_device_error", row.single_error}};
    std::cout << nlohmann::json{{"schedule", schedule.name()}, {"backend", "cpu"}, {"gpus", schedule.gpus},
                                {"errors", errors}, {"passed", passed}, {"wall_s", wall_s}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << schedule.name() << " on the CPU reference executor (" << schedule.gpus << " ranks, seed " << flags.seed
              << "); errors against dense fp64 attention on the same " << to_string(run_problem.dtype)
              << "-rounded inputs\n\n";
    Table table({"output", "max |error|", "single device", "ratio"});
    for (const Row& row : rows)
      table.add_row({row.name, format_fixed(row.error * 1e6, 3) + "e-6", format_fixed(row.single_error * 1e6, 3) + "e-6",
                     format_fixed(row.error / std::max(row.single_error, 1e-12), 2)});
    table.print(std::cout);
    std::cout << "\n" << (passed ? "PASS" : "FAIL") << ": every error within 2x the single-device error ("
              << format_seconds(wall_s) << ")\n";
  }
  return passed ? 0 : 1;
}

}  // namespace tessera::cli
