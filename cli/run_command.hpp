#pragma once
// `tessera run`, `tessera validate`, `tessera calibrate`: execute schedules with real tensors
// (CPU reference executor or CUDA), check the numerics, and set measured beside predicted.
#include "commands.hpp"
#include "problem_flags.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera::cli {

struct RunFlags {
  std::string backend = "cpu";
  std::string transport = "local";
  uint64_t seed = 1;
  double watchdog_s = 60;
  std::string trace;        // measured Chrome trace
  std::string calibration;  // validate: calibration JSON; calibrate: the file to write
  std::string gpu{kDefaultGpu.name}; // validate without a calibration file: the GPU profile
  std::string sides = "128,256,512,1024";  // calibrate: block sides in tokens
  int repeats = 3;
  int executions = 3;  // validate: timed executions (more than 1: after one warm-up), the one of median measured / predicted compared
  std::string save;  // run: folder for the inputs and outputs as .npy files
  std::string load;  // run: folder with Q, K, V, dO .npy files to run on
  int32_t devices = 0;      // cpu: cores the ranks run on (0: every core)
  std::string speed_reference = "on";  // validate: on (scale to the machine's speed now) or off
  int concurrency = 4;      // calibrate: concurrent blocks measured on one device (1 .. this)
  std::string concurrency_side;  // calibrate: their side in tokens (empty: the middle of `sides`)
  double max_block_spread_percent = 25;  // calibrate: time the blocks again above this interquartile spread
  int block_attempts = 3;                // calibrate: timings of the blocks at most (the steadiest kept)
  bool predict_only = false;             // validate: print the prediction for the run's configuration, execute nothing
};

int run_execute(const ProblemFlags& problem, const ScheduleFlags& schedule, const RunFlags& flags,
                const CommonFlags& common);
int run_validate(const ProblemFlags& problem, const ScheduleFlags& schedule, const HardwareFlags& hardware,
                 const NetworkFlags& network, const RunFlags& flags, const CommonFlags& common);
int run_calibrate(const ProblemFlags& problem, const RunFlags& flags);

}  // namespace tessera::cli
