#pragma once
// `tessera run`: execute a schedule with real tensors and check the numerics.
#include "commands.hpp"
#include "problem_flags.hpp"

namespace tessera::cli {

struct RunFlags {
  std::string backend = "cpu";
  uint64_t seed = 1;
};

int run_execute(const ProblemFlags& problem, const ScheduleFlags& schedule, const RunFlags& flags,
                const CommonFlags& common);

}  // namespace tessera::cli
