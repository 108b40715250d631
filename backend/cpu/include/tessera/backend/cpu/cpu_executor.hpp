#pragma once
// The CPU reference executor: runs any checked schedule with real tensors, one rank after
// another in the schedule's execution order (a deterministic interpreter), so every test run
// can check that a schedule computes attention. Inputs are rounded to the problem's dtype;
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
void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors);

// The same, recording when each op started and finished (seconds from the start).
void execute_on_cpu(const schedules::CheckedSchedule& checked, AttentionTensors& tensors, ExecutionRecord& record);

// The interpreter behind the executor interface ("cpu").
std::unique_ptr<ScheduleExecutor> make_cpu_executor();

}  // namespace tessera::backend
