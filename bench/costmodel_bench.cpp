// Benchmark: generate + check + cost Mesh-Attention forward+backward at N = 1M.
// Targets (issue 2, one core): <= 50 ms at P = 256 and <= 1 s at P = 1024.
// Prints the median of several repetitions and each phase; never fails on speed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/cost.hpp"
#include "bench_timing.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;
using bench::Clock;
using bench::median;
using bench::seconds_since;


int main(int argc, char** argv) {
  int repetitions = argc > 1 ? std::atoi(argv[1]) : 5;
  if (repetitions < 1) repetitions = 1;
  Problem problem;  // Llama-3-8B-like layer: 32 heads, 8 KV heads, d = 128, bf16, causal
  problem.seq_len = 1 << 20;
  problem.pass = Pass::both;
  std::printf("mesh forward+backward, N = 1M, H = 32, G = 8, d = 128, causal zigzag; median of %d runs\n", repetitions);
  std::printf("%6s %8s %10s %10s %10s %10s %10s %8s\n", "P", "tile", "ops", "generate", "check", "cost", "total",
              "target");
  for (int32_t gpus : {256, 1024}) {
    std::vector<double> generate_s, check_s, cost_s, total_s;
    size_t ops = 0;
    std::string tile;
    for (int run = 0; run < repetitions; ++run) {
      auto start = Clock::now();
      GeneratorOptions options;
      options.gpus = gpus;
      Schedule schedule = generate_schedule("mesh", problem, options);
      double generated = seconds_since(start);
      BlockGrid grid(problem, schedule.layout, gpus);
      auto checked_at = Clock::now();
      CheckResult check = check_schedule(schedule, grid);
      double checked = seconds_since(checked_at);
      if (!check.ok()) {
        std::printf("invalid schedule: %s\n", check.violation.c_str());
        return 1;
      }
      auto costed_at = Clock::now();
      CostReport report = cost_schedule(schedules::check(schedule), Hardware{});
      double costed = seconds_since(costed_at);
      total_s.push_back(seconds_since(start));
      generate_s.push_back(generated);
      check_s.push_back(checked);
      cost_s.push_back(costed);
      ops = schedule.ops.size();
      tile = schedule.variant.substr(0, schedule.variant.find(' '));
      if (report.time_s <= 0) return 1;  // keep the work observable
    }
    std::printf("%6d %8s %10zu %8.1fms %8.1fms %8.1fms %8.1fms %6.0fms\n", gpus, tile.c_str(), ops,
                median(generate_s) * 1e3, median(check_s) * 1e3, median(cost_s) * 1e3, median(total_s) * 1e3,
                gpus == 256 ? 50.0 : 1000.0);
  }
  return 0;
}
