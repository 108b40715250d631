// Simulator benchmarks (issue 4); prints figures, never fails on speed.
//  (1) 1024-rank ring all-reduce as individual flows (~2.1 M flows); target <= 1 s
//  (2) mesh forward+backward, P = 256, N = 1M, on 32 nodes x 8 GPUs; target <= 0.5 s
//  (3) the same at P = 1024 on 128 nodes x 8 GPUs; target <= 10 s
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_timing.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sim/collective_sim.hpp"
#include "tessera/sim/simulator.hpp"
#include "tessera/topologies/builders.hpp"

using namespace tessera;
using namespace tessera::schedules;
using bench::Clock;
using bench::median;

namespace {
std::vector<int32_t> linear(int32_t ranks) {
  std::vector<int32_t> placement(static_cast<size_t>(ranks));
  for (int32_t rank = 0; rank < ranks; ++rank) placement[static_cast<size_t>(rank)] = rank;
  return placement;
}
}  // namespace

int main() {
  {
    topo::Topology ring = topo::build_ring(1024, 50e9, 1e-6, false);
    std::vector<double> times;
    sim::CollectiveResult result;
    for (int run = 0; run < 3; ++run) {
      auto start = Clock::now();
      result = sim::simulate_collective(CollectiveKind::all_reduce, 1e9, ring, linear(1024), sim::Fidelity::flow);
      times.push_back(bench::seconds_since(start));
    }
    double seconds = median(times);
    std::printf("(1) ring all-reduce, 1024 ranks, %zu flows: %.3f s (median of 3), %.2f M flows/s, target 1 s\n",
                result.flows, seconds, static_cast<double>(result.flows) / seconds / 1e6);
  }
  for (auto [gpus, target_s] : {std::pair{256, 0.5}, std::pair{1024, 10.0}}) {
    Problem problem;
    problem.seq_len = 1 << 20;
    problem.pass = Pass::both;
    GeneratorOptions options;
    options.gpus = gpus;
    const CheckedSchedule checked = check(generate_schedule("mesh", problem, options));
    const Schedule& schedule = checked.schedule();
    topo::HierarchicalSpec spec;
    spec.nodes = gpus / 8;
    topo::Topology cluster = topo::build_hierarchical(spec);
    std::vector<double> times;
    sim::SimResult result;
    for (int run = 0; run < 3; ++run) {
      auto start = Clock::now();
      result = sim::simulate(checked, cluster, linear(gpus), sim::GpuProfile{}, sim::SimOptions{});
      times.push_back(bench::seconds_since(start));
    }
    double seconds = median(times);
    std::printf("(%d) mesh %s fwd+bwd, P = %d on %d x 8: %.3f s (median of 3), %zu events, %.2f M events/s, "
                "makespan %.1f ms, target %.1f s\n",
                gpus == 256 ? 2 : 3, schedule.variant.c_str(), gpus, gpus / 8, seconds, result.events,
                static_cast<double>(result.events) / seconds / 1e6, result.makespan_s * 1e3, target_s);
  }
  {
    // Schedule quality: the greedy mesh order against the two simple orders, same traffic.
    Problem problem;
    problem.seq_len = 1 << 20;
    problem.pass = Pass::both;
    topo::HierarchicalSpec spec;
    spec.nodes = 32;
    topo::Topology cluster = topo::build_hierarchical(spec);
    std::printf("mesh 16x16 fwd+bwd, P = 256, N = 1M on 32 x 8 (flow fidelity): simulated makespan by order\n");
    for (const char* order : {"greedy", "receives-first", "ring-order"}) {
      GeneratorOptions options;
      options.gpus = 256;
      options.tile = TileShape{16, 16};
      options.variant = order;
      const CheckedSchedule checked = check(generate_schedule("mesh", problem, options));
      auto result = sim::simulate(checked, cluster, linear(256), sim::GpuProfile{}, sim::SimOptions{});
      std::printf("  %-15s %8.2f ms  (lower bound %.2f ms, ratio %.3f)\n", order, result.makespan_s * 1e3,
                  result.lower_bound_s * 1e3, result.makespan_s / result.lower_bound_s);
    }
  }
  return 0;
}
