// A schedule held by rotation (the programs of a period's GPUs) simulated on a network that looks
// the same from every shifted GPU gives the full program's simulation bit for bit: every op of a
// held GPU starts and ends when that GPU's op does in the full run, every GPU's times are its
// held GPU's, every link carries what its twin carries (sim/src/rotation_resources.hpp). Where
// the network breaks the symmetry, simulate refuses the held form and says why. Two sums are
// equal to the last bits only: a GPU's communication time and a link's busy time add up the same
// intervals, but where events coincide the two runs take them in another order (or one interval
// as two), so they are held to 1e-12 of their value.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/sim/symmetric_period.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/placement.hpp"

#include "common/problems.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

// Op indices of `gpu`'s program, in the schedule's order.
std::vector<size_t> program_of(const Schedule& schedule, int32_t gpu) {
  std::vector<size_t> ops;
  for (size_t index = 0; index < schedule.ops.size(); ++index)
    if (schedule.ops[index].gpu == gpu) ops.push_back(index);
  return ops;
}

void require_same_simulation(const CheckedSchedule& full, const CheckedSchedule& held, const topo::Topology& topology,
                             const sim::SimOptions& options) {
  const std::vector<int32_t> placement = topo::order_ranks(topology, full.schedule().gpus, "linear");
  const sim::GpuProfile gpu = sim::gpu_profile("h100");
  const sim::SimResult whole = sim::simulate(full, topology, placement, gpu, options);
  const sim::SimResult rotated = sim::simulate(held, topology, placement, gpu, options);
  CHECK(rotated.makespan_s == whole.makespan_s);
  CHECK(rotated.lower_bound_s == whole.lower_bound_s);
  CHECK(rotated.transfers == whole.transfers);
  REQUIRE(rotated.gpus.size() == whole.gpus.size());
  for (size_t g = 0; g < whole.gpus.size(); ++g) {
    INFO("GPU " << g);
    CHECK(rotated.gpus[g].compute_s == whole.gpus[g].compute_s);
    CHECK(rotated.gpus[g].communication_s == Approx(whole.gpus[g].communication_s).epsilon(1e-12));
    CHECK(rotated.gpus[g].exposed_wait_s == whole.gpus[g].exposed_wait_s);
    CHECK(rotated.gpus[g].finish_s == whole.gpus[g].finish_s);
    CHECK(rotated.gpus[g].received_bytes == whole.gpus[g].received_bytes);
    CHECK(rotated.gpus[g].receive_bound_s == whole.gpus[g].receive_bound_s);
  }
  REQUIRE(rotated.resources.size() == whole.resources.size());
  for (size_t r = 0; r < whole.resources.size(); ++r) {
    INFO("resource " << r);
    CHECK(rotated.resources[r].bytes == whole.resources[r].bytes);
    CHECK(rotated.resources[r].busy_s == Approx(whole.resources[r].busy_s).epsilon(1e-12));
    CHECK(rotated.resources[r].utilization == whole.resources[r].utilization);
  }
  // The held GPUs' programs are the full program's first GPUs' programs, op for op.
  for (int32_t g = 0; g < held.schedule().period; ++g) {
    const std::vector<size_t> mine = program_of(held.schedule(), g), theirs = program_of(full.schedule(), g);
    REQUIRE(mine.size() == theirs.size());
    for (size_t k = 0; k < mine.size(); ++k) {
      INFO("GPU " << g << ", op " << k << ": " << held.schedule().describe(held.schedule().ops[mine[k]]));
      REQUIRE(held.schedule().ops[mine[k]].kind == full.schedule().ops[theirs[k]].kind);
      CHECK(rotated.op_start_s[mine[k]] == whole.op_start_s[theirs[k]]);
      CHECK(rotated.op_finish_s[mine[k]] == whole.op_finish_s[theirs[k]]);
    }
  }
}

struct Case {
  std::string algorithm;
  int32_t gpus;
  std::optional<TileShape> tile;
  std::string variant;
};

// The case's generator options, every GPU's program (by_rotation false).
GeneratorOptions options_of(const Case& c, int32_t buffers) {
  GeneratorOptions options;
  options.gpus = c.gpus;
  options.tile = c.tile;
  options.variant = c.variant;
  options.buffers = buffers;
  return options;
}

}  // namespace

TEST_CASE("held by rotation, the uniform network simulates every GPU's run from a period's", "[sim][rotation]") {
  const std::vector<Case> cases = {
      {"ring", 8, std::nullopt, ""},        {"ring", 16, std::nullopt, "pass-q"}, {"ring", 12, std::nullopt, ""},
      {"mesh", 16, TileShape{4, 4}, ""},    {"mesh", 16, TileShape{2, 8}, ""},    {"mesh", 12, TileShape{4, 3}, ""},
      {"mesh", 8, TileShape{8, 1}, ""},     {"usp", 16, TileShape{4, 4}, ""},     {"usp", 16, TileShape{2, 8}, ""},
      {"usp", 8, TileShape{4, 2}, ""},     {"attention2d", 8, TileShape{1, 8}, "ring"},
      {"attention2d", 12, TileShape{12, 1}, "ring"},
  };
  for (MaskKind mask : {MaskKind::causal, MaskKind::full})
    for (int32_t buffers : {2, 0})
      for (const Case& c : cases) {
        const Problem problem = test::llama_like(c.gpus * 2048, mask, Pass::both);
        GeneratorOptions options = options_of(c, buffers);
        const CheckedSchedule full = generate_checked(c.algorithm, problem, options);
        options.by_rotation = true;
        const CheckedSchedule held = generate_checked(c.algorithm, problem, options);
        INFO(held.schedule().name() << " on " << c.gpus << " GPUs, " << to_string(mask) << ", buffers " << buffers);
        REQUIRE(held.schedule().form == ProgramForm::rotation);
        const topo::Topology uniform = topo::build_switch(c.gpus, 50e9, 2.5e-6);
        sim::SimOptions flow;
        require_same_simulation(full, held, uniform, flow);
        sim::SimOptions alpha_beta;
        alpha_beta.fidelity = sim::Fidelity::alpha_beta;
        require_same_simulation(full, held, uniform, alpha_beta);
      }
}

TEST_CASE("a network that breaks the rotation's symmetry refuses the held form, saying why", "[sim][rotation]") {
  // Two servers of 8 GPUs: GPU 0 sends to GPU 1 over NVLink, GPU 7 to GPU 8 over the network,
  // so a ring's GPU 0 does not stand for GPU 7.
  const Problem problem = test::llama_like(16 * 2048, MaskKind::causal, Pass::both);
  GeneratorOptions options;
  options.gpus = 16;
  options.by_rotation = true;
  const CheckedSchedule held = generate_checked("ring", problem, options);
  REQUIRE(held.schedule().form == ProgramForm::rotation);
  const topo::Topology servers = topo::load_topology("h100-ib:2");
  REQUIRE_THROWS_WITH(sim::simulate(held, servers, topo::order_ranks(servers, 16, "linear"), sim::gpu_profile("h100"), sim::SimOptions{}),
                      Catch::Contains("held by rotation") && Catch::Contains("generate it in full"));
  // Ranks sharing channels are counted per GPU: the held GPUs alone cannot stand for them.
  sim::SimOptions channels;
  channels.channels = 1;
  const topo::Topology uniform = topo::build_switch(16, 50e9, 2.5e-6);
  REQUIRE_THROWS_WITH(sim::simulate(held, uniform, topo::order_ranks(uniform, 16, "linear"), sim::gpu_profile("h100"), channels),
                      Catch::Contains("1 GPU(s) alone"));
}

TEST_CASE("on servers under leaves, a leaf group's programs simulate every GPU's run", "[sim][rotation]") {
  // Four servers of two GPUs, one NIC per GPU on its rail, leaves of two servers: two leaf
  // groups. A ring's GPU 1 -> 2 stays under a leaf and its shift by one server, GPU 3 -> 4,
  // crosses a spine; shifted by one GPU, GPU 0 -> 1 inside a server becomes 1 -> 2 between
  // servers. A shift by a leaf group (4 GPUs) maps every route onto one of the same kinds of
  // links: the smallest period is 4 wherever the schedule's own divides it.
  topo::HierarchicalSpec spec;
  spec.nodes = 4;
  spec.gpus_per_node = 2;
  spec.nics_per_node = 2;
  spec.leaf_down_ports = 2;
  const topo::Topology servers = topo::build_hierarchical(spec);
  const std::vector<int32_t> placement = topo::order_ranks(servers, 8, "linear");
  const std::vector<Case> cases = {{"ring", 8, std::nullopt, ""},
                                   {"ring", 8, std::nullopt, "pass-q"},
                                   {"mesh", 8, TileShape{2, 4}, ""},
                                   {"mesh", 8, TileShape{4, 2}, ""}};
  for (MaskKind mask : {MaskKind::causal, MaskKind::full})
    for (int32_t buffers : {2, 0})
      for (const Case& c : cases) {
        const Problem problem = test::llama_like(c.gpus * 2048, mask, Pass::both);
        GeneratorOptions options = options_of(c, buffers);
        const CheckedSchedule full = generate_checked(c.algorithm, problem, options);
        options.by_rotation = true;
        const CheckedSchedule own = generate_checked(c.algorithm, problem, options);
        INFO(own.schedule().name() << ", " << to_string(mask) << ", buffers " << buffers);
        REQUIRE(own.schedule().form == ProgramForm::rotation);
        REQUIRE(sim::symmetric_period(own.schedule(), servers, placement) == 4);
        options.rotation_period = 4;
        const CheckedSchedule held = generate_checked(c.algorithm, problem, options);
        REQUIRE(held.schedule().form == ProgramForm::rotation);
        REQUIRE(held.schedule().period == 4);
        sim::SimOptions flow;
        require_same_simulation(full, held, servers, flow);
        sim::SimOptions alpha_beta;
        alpha_beta.fidelity = sim::Fidelity::alpha_beta;
        require_same_simulation(full, held, servers, alpha_beta);
      }
  // ATTENTION2D's one ring held at a period larger than its own (1) too, on the uniform network,
  // which looks the same under any shift.
  const Problem problem = test::llama_like(8 * 2048, MaskKind::causal, Pass::both);
  GeneratorOptions ring_2d;
  ring_2d.gpus = 8;
  ring_2d.tile = TileShape{8, 1};
  ring_2d.variant = "ring";
  const CheckedSchedule full = generate_checked("attention2d", problem, ring_2d);
  ring_2d.by_rotation = true;
  ring_2d.rotation_period = 4;
  const CheckedSchedule held = generate_checked("attention2d", problem, ring_2d);
  REQUIRE(held.schedule().period == 4);
  require_same_simulation(full, held, topo::build_switch(8, 50e9, 2.5e-6), sim::SimOptions{});
  // A period must be a multiple of the schedule's own that divides the GPUs.
  GeneratorOptions odd;
  odd.gpus = 8;
  odd.by_rotation = true;
  odd.rotation_period = 3;
  REQUIRE_THROWS_WITH(generate_checked("ring", test::llama_like(8 * 2048, MaskKind::causal, Pass::both), odd),
                      Catch::Contains("rotation period of 3 GPUs") && Catch::Contains("divides the 8 GPUs"));
}
