#include "sweep_command.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

#include "plot_command.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/units.hpp"
#include "tessera/plot/chart.hpp"
#include "tessera/sweep/evaluate.hpp"
#include "tessera/sweep/runner.hpp"
#ifdef TESSERA_HAVE_MPI
#include "mpi_communicator.hpp"
#endif

namespace tessera::cli {

namespace {

// More threads than this is a typo; each thread holds a point's schedule and simulation.
constexpr int kMostJobs = 4096;

// Checks every figure request before the run, so that a typo does not wait for the results.
std::vector<plot::PlotRequest> figure_requests(const sweep::Spec& spec) {
  std::vector<plot::PlotRequest> requests;
  for (size_t index = 0; index < spec.figures.size(); ++index) {
    const sweep::FigureRequest& figure = spec.figures[index];
    const std::string where = spec.source + ":" + std::to_string(figure.line) + ": figures[" + std::to_string(index) + "]";
    try {
      plot::PlotRequest request = plot::request_from_options(figure.options);
      auto known = [](const char* key, const std::string& column) {
        try {
          if (!column.empty()) sweep::column_index(column);
        } catch (const UserError& error) {
          throw UserError(std::string(key) + ": " + error.what());
        }
      };
      known("x", request.x);
      known("y", request.y);
      known("series", request.series);
      known("value", request.value);
      for (const auto& [column, value] : request.where) known("where", column);
      if (auto it = figure.options.find("format"); it != figure.options.end())
        if (it->second != "svg" && it->second != "png" && it->second != "both")
          throw UserError("format: '" + it->second + "' is not svg, png or both");
      requests.push_back(std::move(request));
    } catch (const UserError& error) {
      throw UserError(where + "." + error.what());
    }
  }
  return requests;
}

void draw_figures(const sweep::Spec& spec, const std::vector<plot::PlotRequest>& requests, const std::string& out) {
  if (spec.figures.empty()) return;
  if (!spec.write_csv) throw UserError(spec.source + ": figures are drawn from results.csv; add csv to outputs");
  const sweep::Table table = sweep::read_csv((std::filesystem::path(out) / "results.csv").string());
  const auto dir = std::filesystem::path(out) / "figures";
  std::error_code create_error;
  std::filesystem::create_directories(dir, create_error);
  if (create_error)
    throw UserError(dir.string() + ": cannot create the directory for the figures (" + create_error.message() + ")");
  for (size_t index = 0; index < requests.size(); ++index) {
    const auto& options = spec.figures[index].options;
    plot::Figure figure;
    try {
      figure = plot::make_figure(table, requests[index]);
    } catch (const UserError& error) {
      std::cerr << "tessera: figure " << options.at("name") << " not drawn: " << error.what() << "\n";
      continue;
    }
    if (figure.title.empty()) figure.title = options.at("name");
    std::string format = options.count("format") ? options.at("format") : (png_available() ? "both" : "svg");
    const std::string base = (dir / options.at("name")).string();
    if (format == "svg" || format == "both") std::cout << "wrote " << write_figure(figure, base + ".svg", "svg") << "\n";
    if (format == "png" || format == "both") std::cout << "wrote " << write_figure(figure, base + ".png", "png") << "\n";
  }
}

// SIGINT/SIGTERM stopped the run cleanly: say how to resume and exit 2, the code of every run
// that stopped before its end for a reason outside it (a full disk, an unwritable directory),
// as the sweep contract promises (README: Sweeps).
int stopped_by_signal(const sweep::RunSummary& summary) {
  const int signal_number = summary.stopped_by_signal;
  const char* name = signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal";
  std::cout.flush();
  std::cerr << "tessera: stopped by " << name << ": " << summary.already_done + summary.evaluated << " of "
            << summary.points << " points are done and kept in " << summary.journal
            << "; run the same command again to resume" << std::endl;
  return 2;
}

}  // namespace

int run_sweep_command(const SweepFlags& flags) {
  if (flags.jobs < 0 || flags.jobs > kMostJobs)
    throw UserError("--jobs: expected 1 to " + std::to_string(kMostJobs) +
                    " worker threads (or none for all hardware threads), got " + std::to_string(flags.jobs));
  if (flags.count) {
    // Counting runs nothing: a flag of a run would be silently ignored.
    const char* run_flag = !flags.out.empty()           ? "--out"
                           : flags.jobs != 0              ? "--jobs"
                           : flags.limit != 0             ? "--limit"
                           : flags.schedule_cache_given   ? "--schedule-cache"
                                                          : nullptr;
    if (run_flag != nullptr)
      throw UserError(std::string(run_flag) + ": --count only prints the number of points and runs nothing; drop one of them");
    const sweep::Spec spec = sweep::load_spec(flags.spec);
    std::cout << sweep::count_points(spec) << "\n";
    return 0;
  }
  size_t schedule_cache_bytes = 0;
  try {
    schedule_cache_bytes = static_cast<size_t>(parse_byte_size(flags.schedule_cache));
  } catch (const UserError&) {
    throw UserError("--schedule-cache: expected a size such as 512MiB or 2GB (0: no cache), got " +
                    tessera::quoted(flags.schedule_cache));
  }
  std::unique_ptr<sweep::Communicator> communicator;
#ifdef TESSERA_HAVE_MPI
  if (sweep::launched_by_mpi()) communicator = std::make_unique<sweep::MpiCommunicator>();
#endif
  if (!communicator) communicator = std::make_unique<sweep::LocalCommunicator>();
  const bool root = communicator->rank() == 0;
  try {
    sweep::RunOptions options;
    options.out_dir = flags.out;
    options.jobs = flags.jobs;
    options.limit = flags.limit;
    options.schedule_cache_bytes = schedule_cache_bytes;
    options.tool_version = TESSERA_VERSION;
    if (root && !flags.quiet && isatty(STDERR_FILENO)) options.progress = &std::cerr;
    options.stop_on_signals = true;
    // Figure requests are checked before the first point, so that a typo does not wait.
    options.check_spec = [](const sweep::Spec& spec) { figure_requests(spec); };
    const sweep::RunSummary summary = sweep::run_sweep(flags.spec, options, *communicator);
    if (!root) return 0;
    std::cout << summary.points << " points";
    if (communicator->size() > 1) std::cout << " on " << communicator->size() << " MPI ranks";
    std::cout << ": " << summary.already_done << " done before, " << summary.evaluated << " evaluated in "
              << std::fixed << std::setprecision(2) << summary.wall_s << " s; " << summary.ok << " ok, "
              << summary.skipped << " not applicable, " << summary.errors << " errors\n";
    const auto& schedules = summary.schedules;
    if (schedules.misses + schedules.hits > 0)
      std::cout << "schedules: " << schedules.misses << " generated, " << schedules.hits << " reused, "
                << schedules.evictions << " evicted (--schedule-cache " << flags.schedule_cache << "); "
                << schedules.shared_checks << " shared checks (generated at a batch whose plan equals a held one's)\n";
    for (const std::string& path : summary.written) std::cout << "wrote " << path << "\n";
    if (summary.stopped_by_signal != 0 && !summary.complete) return stopped_by_signal(summary);
    if (!summary.complete) {
      std::cout << "stopped before the end (--limit); run the same command again to resume\n";
      return 0;
    }
    const sweep::Spec spec = sweep::load_spec((std::filesystem::path(flags.out) / "spec.yaml").string());
    draw_figures(spec, figure_requests(spec), flags.out);
    return 0;
  } catch (const UserError&) {
    if (!root) return 2;  // rank 0 reports it
    throw;
  }
}

}  // namespace tessera::cli
