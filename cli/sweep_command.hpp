#pragma once
// `tessera sweep SPEC --out DIR` and `tessera plot RESULTS --x COL --y COL ...`.
#include <cstddef>
#include <string>

namespace tessera::cli {

struct SweepFlags {
  std::string spec;
  std::string out;
  int jobs = 0;
  size_t limit = 0;
  bool quiet = false;
  bool count = false;  // print the number of points and exit
  std::string schedule_cache = "512MiB";  // the schedule cache's bound (a size; 0: no cache)
  bool schedule_cache_given = false;      // named on the command line (--count refuses it)
};

int run_sweep_command(const SweepFlags& flags);

}  // namespace tessera::cli
