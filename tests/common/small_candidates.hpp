#pragma once
// Every candidate a plan ranks for small problems, generated but not checked: what the time
// floor suites (tests/costmodel/time_floor_test.cpp, tests/sim/time_floor_sim_test.cpp) hold
// against the models. 4, 8 and 16 GPUs; causal and full masks; forward and both passes; 16 query
// heads over 4 KV heads at 64K tokens; each in full and held by rotation. Candidates that do not
// apply are skipped.
#include <cstdint>
#include <initializer_list>
#include <optional>

#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::test {

struct SmallCandidate {
  const Problem& problem;
  int32_t gpus;
  const schedules::Candidate& candidate;  // its options name the buffers and the rotation
  const schedules::GeneratedSchedule& generated;
};

template <class Visit>
void for_each_small_candidate(std::initializer_list<int32_t> buffer_counts, Visit&& visit) {
  for (const MaskKind mask : {MaskKind::causal, MaskKind::full})
    for (const Pass pass : {Pass::forward, Pass::both})
      for (const int32_t gpus : {4, 8, 16}) {
        Problem problem;
        problem.seq_len = 65536;
        problem.heads = 16;
        problem.kv_heads = 4;
        problem.head_dim = 128;
        problem.head_dim_v = 128;
        problem.mask.kind = mask;
        problem.pass = pass;
        for (const int32_t buffers : buffer_counts)
          for (schedules::Candidate candidate : schedules::plan_candidates(problem, gpus, std::nullopt, buffers))
            for (const bool by_rotation : {false, true}) {
              candidate.options.by_rotation = by_rotation;
              schedules::GeneratedSchedule generated;
              try {
                generated = schedules::generate_unchecked(candidate.algorithm, problem, candidate.options);
              } catch (const UserError&) {
                continue;  // does not apply
              }
              visit(SmallCandidate{problem, gpus, candidate, generated});
            }
      }
}

}  // namespace tessera::test
