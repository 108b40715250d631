#pragma once
// One interface over every way of executing a schedule with real tensors: the CPU reference
// interpreter everywhere, the CUDA executor (virtual ranks on one GPU, or one rank per GPU over
// NCCL) where a GPU exists. Every executor consumes the same checked schedule and fills the
// same AttentionTensors, so numerics are compared the same way for all of them, and records
// when each op ran, so measured times line up with the simulator's predicted ones op by op.
// The executors themselves live in libraries above this one (backend/cpu, backend/cuda); the
// factory (backend/factory) makes them by name.
#include <string>
#include <vector>

#include "tessera/backend/readiness.hpp"
#include "tessera/backend/tensors.hpp"
#include "tessera/schedules/checker.hpp"

namespace tessera::backend {

// Measured times of one run, seconds from the run's start, indexed like Schedule::ops.
struct ExecutionRecord {
  std::string device;                     // "CPU reference interpreter", "NVIDIA H100 80GB HBM3 x1", ...
  std::vector<double> op_start_s, op_finish_s;
  double makespan_s = 0;                  // last op finish
  double wall_s = 0;                      // host wall-clock of the whole run, set-up included
  // Host wall-clock spent issuing the ops, from the start event (CUDA; 0 where not measured).
  // Near the makespan, the host's issuing set the run's pace rather than the device's work.
  double host_issue_s = 0;
  // Where the ranks ran: `devices` devices (CPU cores, GPUs), rank r on device_of_rank[r].
  // Empty when each rank had a device of its own. `tessera validate` predicts this mapping.
  int32_t devices = 0;
  std::vector<int32_t> device_of_rank;
  bool reporting = true;                  // false on MPI processes other than 0 (their results are on 0)
};

enum class Transport { local, nccl, mpi };
Transport parse_transport(const std::string& text);  // "local", "nccl" or "mpi"; UserError otherwise
std::string to_string(Transport transport);

struct ExecutorOptions {
  // local: every rank is a virtual rank on device 0 and transfers are device copies, so any P
  // runs on one GPU; nccl: rank r runs on device r, transfers are NCCL point-to-point; mpi: one
  // process per rank under mpirun.
  Transport transport = Transport::local;
  // The CPU executor's devices (cores): 0 = every core it may run on (cpu_executor.hpp).
  int32_t devices = 0;
  double watchdog_s = 60;  // a run with no progress for this long is aborted, naming the op that waited
};

class ScheduleExecutor {
 public:
  virtual ~ScheduleExecutor() = default;
  virtual std::string name() const = 0;
  // Whether this executor can run the schedule here (limits, memory, devices), decided before
  // anything is allocated. Under the mpi transport every process must ask: the processes agree
  // on the answer, so that none goes on to set up communication while another refuses.
  virtual Readiness can_run(const schedules::CheckedSchedule& checked) const = 0;
  // Runs a schedule can_run accepted: fills out/lse (forward) and d_q/d_k/d_v (backward) of
  // `tensors`, whose inputs must be set (backward-only problems also need out and lse: the
  // forward's results, from which each owner forms its Stats), and the measured op times.
  virtual void execute(const schedules::CheckedSchedule& checked, AttentionTensors& tensors,
                       ExecutionRecord& record) = 0;
  // Where the ranks of a run of `ranks` ranks will sit (the record's device_of_rank, known
  // before the run so that a prediction can come first); empty when not known beforehand.
  virtual std::vector<int32_t> planned_devices(int32_t ranks) const {
    (void)ranks;
    return {};
  }
};

}  // namespace tessera::backend
