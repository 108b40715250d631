// Benchmark: build a 4096-GPU cluster (512 servers x 8 H100, 8 rail-optimised 400 Gb/s NICs,
// leaf-spine) and route every transfer of a P = 1024 Mesh-Attention forward+backward schedule
// at N = 1M, rank r on GPU r. Target (issue 3): <= 1 s for building + routing.
// Prints the median of several repetitions; never fails on speed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "bench_timing.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/topologies/builders.hpp"
#include "tessera/topologies/routing.hpp"

using namespace tessera;
using namespace tessera::schedules;
using bench::Clock;
using bench::median;
using bench::seconds_since;

namespace {

struct Pair {
  int32_t src = 0;
  int32_t dst = 0;
};

// Every point-to-point transfer, in schedule order: send ops and collective transfers.
std::vector<Pair> transfers_of(const Schedule& schedule) {
  std::vector<Pair> pairs;
  for (const Op& op : schedule.ops) {
    if (op.kind == OpKind::send) pairs.push_back({op.gpu, op.peer});
  }
  for (const Collective& collective : schedule.collectives) {
    for (const Transfer& transfer : collective.transfers) pairs.push_back({transfer.src, transfer.dst});
  }
  return pairs;
}
}  // namespace

int main(int argc, char** argv) {
  int repetitions = argc > 1 ? std::atoi(argv[1]) : 3;
  if (repetitions < 1) repetitions = 1;

  topo::HierarchicalSpec spec;  // H100 SXM: 450 GB/s NVLink per direction, 8 x 50 GB/s NICs
  spec.nodes = 512;
  spec.gpus_per_node = 8;
  spec.nics_per_node = 8;
  spec.rail_optimized = true;

  Problem problem;  // Llama-3-8B-like layer: 32 heads, 8 KV heads, d = 128, bf16, causal
  problem.seq_len = 1 << 20;
  problem.pass = Pass::both;
  GeneratorOptions options;
  options.gpus = 1024;
  auto generated_at = Clock::now();
  Schedule schedule = generate_schedule("mesh", problem, options);
  const double generate_s = seconds_since(generated_at);
  const std::vector<Pair> transfers = transfers_of(schedule);
  std::set<std::pair<int32_t, int32_t>> distinct;
  for (const Pair& pair : transfers) distinct.insert({pair.src, pair.dst});

  std::vector<double> build_s, route_s;
  size_t edge_hops = 0;
  int32_t gpus = 0, links = 0;
  for (int run = 0; run < repetitions; ++run) {
    auto built_at = Clock::now();
    topo::Topology cluster = topo::build_hierarchical(spec);
    build_s.push_back(seconds_since(built_at));
    gpus = cluster.gpu_count();
    links = cluster.link_count();

    auto routed_at = Clock::now();
    topo::Router router(cluster);  // a fresh cache every run
    edge_hops = 0;
    for (const Pair& pair : transfers) edge_hops += router.route(pair.src, pair.dst).size();  // linear placement
    route_s.push_back(seconds_since(routed_at));
  }
  const double build = median(build_s), route = median(route_s);
  std::printf("cluster: %d GPUs (512 x 8, 8 rail-optimised NICs, leaf-spine), %d directed links\n", gpus, links);
  std::printf("schedule: mesh %s, P = 1024, N = 1M, forward+backward (generated in %.0f ms, not timed below)\n",
              schedule.variant.c_str(), generate_s * 1e3);
  std::printf("transfers routed: %zu (%zu distinct GPU pairs, %zu link hops)\n", transfers.size(), distinct.size(),
              edge_hops);
  std::printf("median of %d runs: build %.1f ms, route %.1f ms, build + route %.1f ms (target 1000 ms)\n", repetitions,
              build * 1e3, route * 1e3, (build + route) * 1e3);
  std::printf("routes per second: %.3g transfers, %.3g distinct pairs\n", static_cast<double>(transfers.size()) / route,
              static_cast<double>(distinct.size()) / route);
  return edge_hops > 0 ? 0 : 1;  // keep the work observable
}
