// Fuzzes the schedule JSON reader (schedules/schedule_json.hpp) as `tessera check FILE` and
// `--algo file --input FILE` use it: read the file, check the schedule, price it when valid, and
// write it back. What was read must be writable and read back as the same schedule.
#include "fuzz_common.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/costmodel/report_json.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/schedule_json.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile scratch("schedule.json");
  return fuzz::expect_user_errors_only([&] {
    const Schedule schedule = schedules::read_schedule_file(scratch.write(fuzz::text_of(data, size)));
    // Written back and read again: whatever the reader accepts, the writer must keep.
    const std::string written = json_text(schedules::schedule_to_json(schedule));
    const Schedule again = schedules::schedule_from_json(parse_json_text(written, "written"));
    if (again.ops.size() != schedule.ops.size() || again.gpus != schedule.gpus)
      fuzz::finding("the schedule written back reads as another schedule");
    try {
      const schedules::CheckedSchedule checked = schedules::check(schedule);
      const costmodel::CostReport report = costmodel::cost_schedule(checked, costmodel::Hardware{});
      (void)json_text(costmodel::cost_report_to_json(checked.schedule(), report, true));
    } catch (const schedules::InvalidSchedule&) {
      // An invalid schedule is reported as such (`tessera check`): an expected outcome.
    }
  });
}
