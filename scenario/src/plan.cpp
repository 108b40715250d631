#include "tessera/scenario/plan.hpp"

#include <algorithm>
#include <mutex>

#include "tessera/core/error.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera::scenario {

std::string candidate_label(const schedules::Candidate& candidate) {
  std::string label = candidate.algorithm;
  if (candidate.options.tile) label += " " + to_string(*candidate.options.tile);
  if (!candidate.options.variant.empty()) label += " " + candidate.options.variant;
  if (candidate.options.layout) label += " " + to_string(*candidate.options.layout);
  return label;
}

PlanResult plan(const Scenario& base, const PlanControl& control) {
  schedules::require_tokens_per_gpu(base.problem, base.options.gpus);
  const std::vector<schedules::Candidate> candidates =
      schedules::plan_candidates(base.problem, base.options.gpus, base.options.layout, base.options.buffers);
  std::vector<PlanEntry> entries(candidates.size());
  std::mutex progress_mutex;
  size_t done = 0;
  const int threads = control.threads > 0 ? control.threads : std::min(default_threads(), 16);
  Scenario shared = base;
  if (shared.simulation) shared.simulation->options.cancel = control.cancel;
  parallel_for(candidates.size(), threads, [&](size_t index) {
    if (control.cancel && control.cancel->load()) throw sim::SimulationCancelled();
    PlanEntry& entry = entries[index];
    entry.candidate = candidates[index];
    entry.label = candidate_label(entry.candidate);
    Scenario scenario = shared;
    scenario.algorithm = entry.candidate.algorithm;
    scenario.options = entry.candidate.options;
    try {
      Evaluation evaluation = evaluate(scenario);
      entry.identity = evaluation.schedule().identity();
      entry.figures = std::move(evaluation.figures);
    } catch (const UserError& error) {
      entry.refusal = error.what();
    }
    if (control.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      control.progress(++done, candidates.size(), entry.label);
    }
  });
  PlanResult result;
  result.entries = std::move(entries);
  for (size_t index = 0; index < result.entries.size(); ++index)
    if (result.entries[index].figures) result.ranking.push_back(index);
  std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](size_t x, size_t y) {
    return result.entries[x].figures->time_s() < result.entries[y].figures->time_s();
  });
  return result;
}

}  // namespace tessera::scenario
