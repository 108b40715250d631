// Fuzzes the calibration file (core/calibration_file.hpp) and the simulator's readers of it
// (sim/gpu_profile.hpp), as `--calibration FILE` uses them, then writes what was read and reads
// it back: a file the reader accepted must survive the writer.
#include "fuzz_common.hpp"
#include "tessera/core/calibration_file.hpp"
#include "tessera/sim/gpu_profile.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile scratch("calibration.json");
  static const fuzz::ScratchFile rewritten("calibration-rewritten.json");
  return fuzz::expect_user_errors_only([&] {
    const std::string& path = scratch.write(fuzz::text_of(data, size));
    const CalibrationFile file = read_calibration_file(path);
    (void)sim::read_calibration(path);
    (void)sim::read_message_calibration(path);
    (void)sim::read_launch_calibration(path);
    write_calibration_file(rewritten.path(), file);
    try {
      (void)read_calibration_file(rewritten.path());
    } catch (const UserError& error) {
      fuzz::finding(std::string("a calibration the reader accepted does not read back: ") + error.what());
    }
  });
}
