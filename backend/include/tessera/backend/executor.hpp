#pragma once
// One interface over every way of executing a schedule with real tensors: the CPU reference
// interpreter everywhere, the CUDA executor (virtual ranks on one GPU, or one rank per GPU over
// NCCL) where a GPU exists. Every executor consumes the same checked schedule and fills the
// same AttentionTensors, so numerics are compared the same way for all of them, and records
// when each op ran, so measured times line up with the simulator's predicted ones op by op.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/backend/cpu_executor.hpp"

namespace tessera::backend {

// Measured times of one run, seconds from the run's start, indexed like Schedule::ops.
struct ExecutionRecord {
  std::string device;                     // "CPU reference interpreter", "NVIDIA H100 80GB HBM3 x1", ...
  std::vector<double> op_start_s, op_finish_s;
  double makespan_s = 0;                  // last op finish
  double wall_s = 0;                      // host wall-clock of the whole run, set-up included
  bool reporting = true;                  // false on MPI processes other than 0 (their results are on 0)
};

enum class Transport { local, nccl, mpi };
Transport parse_transport(const std::string& text);  // "local", "nccl" or "mpi"; UserError otherwise
std::string to_string(Transport transport);

struct ExecutorOptions {
  // local: every rank is a virtual rank on device 0 and transfers are device copies, so any P
  // runs on one GPU; nccl: rank r runs on device r, transfers are NCCL point-to-point.
  Transport transport = Transport::local;
  double watchdog_s = 60;  // a run with no progress for this long is aborted, naming the op that waited
};

class ScheduleExecutor {
 public:
  virtual ~ScheduleExecutor() = default;
  virtual std::string name() const = 0;
  // Fills out/lse (forward) and d_q/d_k/d_v (backward) of `tensors` (see execute_on_cpu for
  // what must be set beforehand) and the measured op times.
  virtual void execute(const Schedule& schedule, const BlockGrid& grid, const ScheduleAnalysis& analysis,
                       AttentionTensors& tensors, ExecutionRecord& record) = 0;
};

// "cpu" or "cuda". Throws BackendUnavailable when this build or this machine cannot run it
// (no CUDA executor built, no GPU found), UserError for an unknown name.
std::unique_ptr<ScheduleExecutor> make_executor(const std::string& backend, const ExecutorOptions& options);

// Thrown when a backend cannot run here; the message says why in words.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True when this build contains the CUDA executor (whether or not a GPU is present).
bool cuda_executor_built();

}  // namespace tessera::backend
