// Mesh's generator in two halves (mesh_plan.hpp: plan_mesh_program, emit_mesh_program): the
// schedule cache shares a check between batch sizes whose plans are equal, so equal plans must
// give the same program, and unequal plans different ones. The reference is the whole generator
// (generate_schedule) and same_program on its output.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/mesh_plan.hpp"

using namespace tessera;
using namespace tessera::schedules;

TEST_CASE("Mesh: equal plans at two batch sizes exactly when the generated programs are the same", "[mesh][program]") {
  // 32 heads (8 KV) of 128 at 16K tokens: the planner weighs a block, which grows with the batch,
  // against a hop's latency, which does not, so plans change with the batch for some sizes only.
  size_t equal_pairs = 0, unequal_pairs = 0;
  for (const int32_t gpus : {16, 32}) {
    GeneratorOptions options;
    options.gpus = gpus;
    Problem problem;
    problem.seq_len = 16384;
    problem.heads = 32;
    problem.kv_heads = 8;
    problem.head_dim = problem.head_dim_v = 128;
    problem.pass = Pass::both;
    std::vector<MeshProgram> plans;
    std::vector<Schedule> programs;
    for (const int64_t batch : {1, 2, 3, 5, 10, 20, 40}) {
      problem.batch = batch;
      const PlannedMesh planned = plan_mesh_unemitted(problem, options);
      plans.push_back(planned.program);
      programs.push_back(generate_schedule("mesh", problem, options));
      // The two halves are the generator: the same program as generate_schedule's.
      REQUIRE(same_program(emit_planned_mesh(planned, problem, options).schedule, programs.back()));
    }
    for (size_t i = 0; i < plans.size(); ++i)
      for (size_t j = i + 1; j < plans.size(); ++j) {
        INFO(gpus << " GPUs, batches #" << i << " and #" << j);
        const bool same = same_program(programs[i], programs[j]);
        CHECK((plans[i] == plans[j]) == same);
        (same ? equal_pairs : unequal_pairs) += 1;
      }
  }
  // The case covers both outcomes.
  CHECK(equal_pairs > 0);
  CHECK(unequal_pairs > 0);
}
