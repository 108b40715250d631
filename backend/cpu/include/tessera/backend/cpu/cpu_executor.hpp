#pragma once
// The CPU reference executor: runs any checked schedule with real tensors, each rank on its
// own thread, so every test run can check that a schedule computes attention, and a CPU
// validation is a real parallel run. Cores are its devices: P ranks run on D = min(P, cores, or
// the `devices` asked for) cores, rank r's thread pinned to core ranks_on_devices(P, D)[r]
// (core/rank_devices.hpp), so ranks sharing a core share it as the OS time-slices them, which
// the simulator predicts as processor sharing on one device. Inputs are rounded to the problem's dtype;
// blocks are computed in fp32 (online-softmax forward with partial O and LSE, FlashAttention-2
// backward from LSE and delta = rowsum(dO * O)); partial outputs merge by LSE weights and
// gradient partials by sums.
//
// Data model notes: an O transfer carries its LSE with it (LSE items are bookkeeping only), and
// each rank's own chunk of Q, K, V, dO and Stats is present from the start.
#include <memory>

#include "tessera/backend/executor.hpp"
#include "tessera/backend/tensors.hpp"
#include "tessera/schedules/checker.hpp"

namespace tessera::backend {

// Runs the schedule: fills out/lse (forward) and d_q/d_k/d_v (backward) of `tensors`, whose
// inputs must be set. Backward-only problems need tensors.out and tensors.lse set (the
// forward's results), from which each owner forms its Stats.
// `devices` 0: every core this process may run on.
void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, int32_t devices = 0);

// The same, recording when each op started and finished (seconds from the start) and which
// core each rank ran on.
void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record,
                    int32_t devices = 0);

// One op after another in the analysis' execution order, on the calling thread: the reference
// the threaded run is held to (its outputs are the same bit for bit; tests/backend).
void execute_on_cpu_sequentially(const schedules::CheckedSchedule& checked, AttentionTensors& tensors);

// The cores this process may run on (its affinity mask), and the devices a run of `ranks` uses
// when `devices` are asked for (0: every core): min(ranks, devices or cores), at least 1.
int32_t cpu_cores();
int32_t cpu_devices(int32_t ranks, int32_t devices);

// The executor behind the executor interface ("cpu"); `devices` as above.
std::unique_ptr<ScheduleExecutor> make_cpu_executor(int32_t devices = 0);

}  // namespace tessera::backend
