// Sweep throughput: analytical points per second and simulated (flow fidelity) points per
// second for a 10 000-point sweep run by the sweep runner on every core (threads = hardware
// threads), journal and tables included. Each figure is the median of three runs.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "bench_timing.hpp"
#include "tessera/sweep/runner.hpp"

namespace {

// 4 GPU counts x 25 sequence lengths x 5 schedules x 20 batch sizes = 10 000 points.
std::string spec_text(const std::string& fidelity) {
  std::string seq;
  for (int k = 1; k <= 25; ++k) seq += (k > 1 ? ", " : "") + std::to_string(8 * k) + "K";
  std::string batch;
  for (int k = 1; k <= 20; ++k) batch += (k > 1 ? ", " : "") + std::to_string(k);
  return "# bench_sweep: 10 000 points\nfixed:\n  mask: causal\n  pass: both\n  heads: 32\n  kv_heads: 8\n"
         "  fidelity: " + fidelity + "\naxes:\n  - gpus: [4, 8, 16, 32]\n  - seq: [" + seq +
         "]\n  - algo: [ring, mesh, usp, attention2d, ulysses]\n  - batch: [" + batch + "]\n";
}

}  // namespace

int main() {
  namespace fs = std::filesystem;
  using namespace tessera;
  const fs::path dir = fs::temp_directory_path() / ("tessera_bench_sweep_" + std::to_string(::getpid()));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::cout << "bench_sweep: 10 000-point sweep (4 GPU counts 4..32 x 25 lengths 8K..200K x 5 schedules x 20 batch "
               "sizes), causal, fwd+bwd, "
            << threads << " threads; median of 3 runs\n";
  for (const std::string fidelity : {"analytic", "flow"}) {
    fs::create_directories(dir);
    const std::string spec = (dir / (fidelity + ".yaml")).string();
    {
      std::ofstream out(spec);
      out << spec_text(fidelity);
    }
    std::vector<double> seconds;
    size_t points = 0, ok = 0;
    for (int run = 0; run < 3; ++run) {
      const fs::path out = dir / (fidelity + "_" + std::to_string(run));
      sweep::LocalCommunicator local;
      sweep::RunOptions options;
      options.out_dir = out.string();
      options.tool_version = "bench";
      const auto start = bench::Clock::now();
      const sweep::RunSummary summary = sweep::run_sweep(spec, options, local);
      seconds.push_back(bench::seconds_since(start));
      points = summary.points;
      ok = summary.ok;
      fs::remove_all(out);
    }
    const double median = bench::median(seconds);
    std::cout << "  " << (fidelity == "flow" ? "simulated (flow)" : "analytical      ") << ": " << points << " points ("
              << ok << " ok) in " << median << " s = " << static_cast<double>(points) / median << " points/s\n";
  }
  fs::remove_all(dir);
  return 0;
}
