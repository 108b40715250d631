#pragma once
// Planning: every applicable schedule and tile shape for one problem (the candidates of
// schedules/generators.hpp), each generated, and each that can still rank first (its time
// floor at most the best time) evaluated as evaluate() does, on all cores, ranked by time.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/costmodel/time_floor.hpp"
#include "tessera/scenario/evaluate.hpp"

namespace tessera::scenario {

struct PlanEntry {
  schedules::Candidate candidate;
  std::string label;               // candidate_label(candidate)
  std::string refusal;             // why it does not apply, in words; empty when evaluated
  // The schedule's identity (algorithm, variant, layout, GPUs, head groups, problem); its ops
  // and collectives are not kept: a plan of hundreds of GPUs holds dozens of candidates.
  Schedule identity;
  std::optional<Figures> figures;  // none when the schedule does not apply or was set aside
  // The floor under its time, read off its generated ops before the check (the analytical
  // model's, costmodel/time_floor.hpp, or the simulator's, sim/time_bound.hpp), and whose
  // stream or link gives it; 0 s where it was not generated.
  costmodel::TimeFloor floor;
  // Set aside: its floor is above the best time of the plan, so it cannot rank first. It was
  // generated, but neither checked nor priced (PlanControl::exhaustive prices it).
  bool set_aside = false;
};

struct PlanResult {
  std::vector<PlanEntry> entries;  // in candidate order
  std::vector<size_t> ranking;     // indices of the evaluated entries by time_s(), fastest first
                                   // (ties keep candidate order)
  const PlanEntry& ranked(size_t position) const { return entries[ranking[position]]; }
};

struct PlanControl {
  int threads = 0;  // 0: default_threads(), at most 16
  // Called after each candidate, from the thread that evaluated it, one call at a time.
  std::function<void(size_t done, size_t total, const std::string& label)> progress;
  // Set from another thread to stop: no further candidate starts, a running simulation stops,
  // and plan() throws sim::SimulationCancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Check and price every candidate. Otherwise (the default) one whose floor is above the best
  // time of the plan is set aside (PlanEntry::set_aside) before its check: candidates go from the
  // smallest memory estimate up, and each is checked only while its floor is at most the best
  // time so far. Which are set aside does not depend on the threads: every candidate whose floor
  // is above the plan's best time is, and no other; the best and every figure shown are those an
  // exhaustive plan gives.
  bool exhaustive = false;
};

// "mesh 8x32 zigzag": the algorithm, then its tile, variant and layout where it has them.
std::string candidate_label(const schedules::Candidate& candidate);

// Floors within this relative margin of the best time are not set aside: a floor sums its ops'
// durations in another order than the model does, a few ulps apart.
inline constexpr double kFloorMargin = 1e-6;

// Evaluates the candidates of `base.problem` on `base.options.gpus` GPUs (layout and buffers
// from base.options) with the network, hardware and simulation of `base`: every one with
// control.exhaustive, else those whose floor does not set them aside (PlanControl::exhaustive).
PlanResult plan(const Scenario& base, const PlanControl& control = {});

}  // namespace tessera::scenario
