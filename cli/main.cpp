// tessera: the command line. Parses, calls the libraries, prints.
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "tessera/core/error.hpp"

int main(int argc, char** argv) {
  using namespace tessera::cli;
  CLI::App app{"Tessera: plan, cost and check distributed attention schedules for long-context LLMs.\n"
               "Run `tessera plan` to rank every schedule for a built-in Llama-3-8B-like layer\n"
               "(32 heads, 8 KV heads, d=128, bf16, causal) at 1M tokens on 256 GPUs."};
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION);
  app.require_subcommand(0, 1);

  ProblemFlags problem;
  ScheduleFlags schedule;
  HardwareFlags hardware;
  CommonFlags common;

  auto* schedules = app.add_subcommand("schedules", "list the schedule generators");
  schedules->add_flag("--json", common.json, "print one JSON object");

  auto* cost = app.add_subcommand("cost", "cost one schedule: bytes, FLOPs, memory, time, lower bound");
  add_problem_flags(*cost, problem);
  add_schedule_flags(*cost, schedule, true);
  add_hardware_flags(*cost, hardware);
  cost->add_flag("--json", common.json, "print one JSON object");
  cost->add_flag("--per-gpu", common.per_gpu, "with --json: add per-GPU figures");

  auto* plan = app.add_subcommand("plan", "rank every applicable schedule and tile shape for a problem (the main job)");
  add_problem_flags(*plan, problem);
  add_hardware_flags(*plan, hardware);
  plan->add_flag("--json", common.json, "print one JSON object");
  plan->add_option("--top", common.top, "show only the best N schedules");

  auto* write = app.add_subcommand("schedule", "generate a schedule and write its JSON form");
  add_problem_flags(*write, problem);
  add_schedule_flags(*write, schedule, true);
  write->add_option("--output,-o", common.output, "file to write (default: standard output)");

  auto* check = app.add_subcommand("check", "check a schedule file: coverage, matching, data, deadlock, ownership");
  check->add_option("file", common.file, "schedule JSON file")->required();
  check->add_flag("--json", common.json, "print one JSON object (with the cost when valid)");
  add_hardware_flags(*check, hardware);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    std::string message = error.what();
    std::cerr << "tessera: " << message << " (see `tessera --help`)\n";
    return 2;
  }
  try {
    if (*schedules) return run_schedules(common);
    if (*cost) return run_cost(problem, schedule, hardware, common);
    if (*plan) return run_plan(problem, hardware, common);
    if (*write) return run_schedule(problem, schedule, common);
    if (*check) return run_check(hardware, common);
    std::cout << app.help();
    return 0;
  } catch (const tessera::UserError& error) {
    std::cerr << "tessera: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "tessera: internal error: " << error.what() << "\n";
    return 3;
  }
}
