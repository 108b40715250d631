#pragma once
// The subcommands. Each returns the process exit code: 0 done, 1 a finding (an invalid
// schedule), 2 bad input (thrown as UserError and reported by main).
#include "problem_flags.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera::cli {

struct CommonFlags {
  bool json = false;
  bool per_gpu = false;
  std::string output;  // schedule: file to write
  int top = 0;         // plan: rows to show (0 = all)
  std::string file;    // check: the schedule file
  std::string model = "flow";  // plan: rank by "flow" simulation or the "analytic" model
  std::string gpu{kDefaultGpu.name};    // plan with --model flow: GPU profile
  bool exhaustive = false;  // plan: check and price every candidate, none set aside by its floor
};

int run_schedules(const CommonFlags& common);
int run_cost(const ProblemFlags& problem, const ScheduleFlags& schedule, const HardwareFlags& hardware,
             const NetworkFlags& network, const CommonFlags& common);
int run_plan(const ProblemFlags& problem, const HardwareFlags& hardware, const NetworkFlags& network,
             const CommonFlags& common);
int run_schedule(const ProblemFlags& problem, const ScheduleFlags& schedule, const CommonFlags& common);
int run_check(const HardwareFlags& hardware, const CommonFlags& common);

}  // namespace tessera::cli
