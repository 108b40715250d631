// Sweep throughput: analytical points per second and simulated (flow fidelity) points per
// second for a 10 000-point sweep run by the sweep runner on every core (threads = hardware
// threads), journal and tables included; then a 2 400-point sweep of network points (8 bandwidths
// x 3 latencies per schedule), with the schedule cache (scenario/schedule_cache.hpp) and without
// it. Each figure is the median of three runs.
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "bench_timing.hpp"
#include "tessera/sweep/runner.hpp"

namespace {

std::string join(int count, const std::function<std::string(int)>& value) {
  std::string text;
  for (int k = 1; k <= count; ++k) text += (k > 1 ? ", " : "") + value(k);
  return text;
}

// 4 GPU counts x 25 sequence lengths x 5 schedules x 20 batch sizes = 10 000 points, every one a
// different schedule.
std::string problems_spec(const std::string& fidelity) {
  return "# bench_sweep: 10 000 points\nfixed:\n  mask: causal\n  pass: both\n  heads: 32\n  kv_heads: 8\n"
         "  fidelity: " + fidelity + "\naxes:\n  - gpus: [4, 8, 16, 32]\n  - seq: [" +
         join(25, [](int k) { return std::to_string(8 * k) + "K"; }) +
         "]\n  - algo: [ring, mesh, usp, attention2d, ulysses]\n  - batch: [" +
         join(20, [](int k) { return std::to_string(k); }) + "]\n";
}

// 4 GPU counts x 5 sequence lengths x 5 schedules = 100 schedules, each at 8 bandwidths x 3
// latencies = 24 network points: 2 400 points.
std::string network_spec(const std::string& fidelity) {
  return "# bench_sweep: 2 400 network points\nfixed:\n  mask: causal\n  pass: both\n  heads: 32\n  kv_heads: 8\n"
         "  fidelity: " + fidelity + "\naxes:\n  - gpus: [4, 8, 16, 32]\n  - seq: [" +
         join(5, [](int k) { return std::to_string(32 * k) + "K"; }) +
         "]\n  - algo: [ring, mesh, usp, attention2d, ulysses]\n  - bandwidth: [" +
         join(8, [](int k) { return std::to_string(50 * k) + "Gb/s"; }) + "]\n  - latency_us: [1, 5, 10]\n";
}

struct Throughput {
  size_t points = 0, ok = 0;
  double median_s = 0;
};

Throughput measure(const std::filesystem::path& dir, const std::string& name, const std::string& spec_text,
                   size_t schedule_cache_bytes) {
  namespace fs = std::filesystem;
  const std::string spec = (dir / (name + ".yaml")).string();
  {
    std::ofstream out(spec);
    out << spec_text;
  }
  std::vector<double> seconds;
  Throughput result;
  for (int run = 0; run < 3; ++run) {
    const fs::path out = dir / (name + "_" + std::to_string(run));
    tessera::sweep::LocalCommunicator local;
    tessera::sweep::RunOptions options;
    options.out_dir = out.string();
    options.tool_version = "bench";
    options.schedule_cache_bytes = schedule_cache_bytes;
    const auto start = tessera::bench::Clock::now();
    const tessera::sweep::RunSummary summary = tessera::sweep::run_sweep(spec, options, local);
    seconds.push_back(tessera::bench::seconds_since(start));
    result.points = summary.points;
    result.ok = summary.ok;
    fs::remove_all(out);
  }
  result.median_s = tessera::bench::median(seconds);
  return result;
}

void print(const std::string& label, const Throughput& result) {
  std::cout << "  " << label << ": " << result.points << " points (" << result.ok << " ok) in " << result.median_s
            << " s = " << static_cast<double>(result.points) / result.median_s << " points/s\n";
}

}  // namespace

int main() {
  namespace fs = std::filesystem;
  using tessera::scenario::ScheduleCache;
  const fs::path dir = fs::temp_directory_path() / ("tessera_bench_sweep_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::cout << "bench_sweep: 10 000-point sweep (4 GPU counts 4..32 x 25 lengths 8K..200K x 5 schedules x 20 batch "
               "sizes), causal, fwd+bwd, "
            << threads << " threads; median of 3 runs\n";
  // (cluster_scale.py reads the two lines labelled "analytical" and "simulated (flow)".)
  for (const std::string fidelity : {"analytic", "flow"})
    print(fidelity == "flow" ? "simulated (flow)" : "analytical      ",
          measure(dir, fidelity, problems_spec(fidelity), ScheduleCache::kDefaultBytes));
  std::cout << "network points: 2 400-point sweep (100 schedules x 8 bandwidths x 3 latencies), with the schedule "
               "cache and without (--schedule-cache 0)\n";
  for (const std::string fidelity : {"analytic", "flow"}) {
    const Throughput cached = measure(dir, "network_" + fidelity, network_spec(fidelity), ScheduleCache::kDefaultBytes);
    const Throughput uncached = measure(dir, "network_" + fidelity + "_0", network_spec(fidelity), 0);
    print(fidelity + ", cached  ", cached);
    print(fidelity + ", uncached", uncached);
  }
  fs::remove_all(dir);
  return 0;
}
