// Fuzzes the assignment-matrix reader (`--algo assignment --input FILE`, schedules/assignment.cpp)
// through the generator the CLI calls, which then checks the schedule it built. The first byte
// chooses the problem (GPU count 1 to 16, mask), so that matrices of every size are read; the
// rest is the file.
#include <string>

#include "fuzz_common.hpp"
#include "tessera/scenario/scenario.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const fuzz::ScratchFile scratch("assignment.json");
  static const char* const masks[] = {"full", "causal", "sliding-window", "documents"};
  const int gpus = 1 + (data[0] & 15);
  scenario::ProblemText problem;
  problem.gpus = std::to_string(gpus);
  problem.seq = std::to_string(64 * gpus);
  problem.heads = "4";
  problem.kv_heads = "2";
  problem.head_dim = "64";
  problem.mask = masks[(data[0] >> 4) & 3];
  problem.window = "96";
  problem.documents = std::to_string(32 * gpus) + "," + std::to_string(32 * gpus);
  scenario::ScheduleText schedule;
  schedule.algorithm = "assignment";
  schedule.input = scratch.write(fuzz::text_of(data + 1, size - 1));
  return fuzz::expect_user_errors_only([&] {
    // A generator's schedule that the checker rejects is a std::runtime_error (a bug), so it is
    // left to escape here.
    (void)schedules::generate_checked(schedule.algorithm, scenario::make_problem(problem),
                                      scenario::make_options(problem, schedule));
  });
}
