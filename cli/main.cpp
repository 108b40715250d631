// tessera: the command line. Parses, calls the libraries, prints.
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "output_files.hpp"
#include "flag_rules.hpp"
#include "nccl_import_command.hpp"
#include "run_command.hpp"
#include "plot_command.hpp"
#include "simulate_command.hpp"
#include "sweep_command.hpp"
#include "topo_command.hpp"
#include "tessera/core/error.hpp"

int main(int argc, char** argv) {
  using namespace tessera::cli;
  CLI::App app{"Tessera: plan, cost and check distributed attention schedules for long-context LLMs.\n"
               "Run `tessera plan` to rank every schedule for a built-in Llama-3-8B-like layer\n"
               "(32 heads, 8 KV heads, d=128, bf16, causal) at 1M tokens on 256 GPUs."};
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION);
  const std::string units =
      "Counts and sizes: 4096, or K, M, G, T for powers of 1024 (128K tokens = 131072; --size 1G = 2^30\n"
      "bytes); sizes in bytes also take kB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB.\n"
      "Bandwidths carry their unit, SI: 400Gb/s (bits) or 50GB/s (bytes). Printed bytes are SI.";
  app.footer(units);
  app.require_subcommand(0, 1);

  ProblemFlags problem;
  ScheduleFlags schedule;
  HardwareFlags hardware;
  NetworkFlags network;
  CommonFlags common;
  TopoFlags topo;
  SimulateFlags simulate;
  RunFlags execute;

  auto* schedules = app.add_subcommand("schedules", "list the schedule generators");
  schedules->add_flag("--json", common.json, "print one JSON object");

  auto* cost = app.add_subcommand("cost", "cost one schedule: bytes, FLOPs, memory, time, lower bound");
  add_problem_flags(*cost, problem);
  add_schedule_flags(*cost, schedule, true);
  add_hardware_flags(*cost, hardware);
  add_network_flags(*cost, network);
  cost->add_flag("--json", common.json, "print one JSON object");
  cost->add_flag("--per-gpu", common.per_gpu, "with --json: add per-GPU figures");

  auto* plan = app.add_subcommand("plan", "rank every applicable schedule and tile shape for a problem (the main job)");
  add_problem_flags(*plan, problem);
  add_hardware_flags(*plan, hardware);
  add_network_flags(*plan, network);
  plan->add_flag("--json", common.json, "print one JSON object");
  plan->add_option("--top", common.top, "show only the best N schedules (0: all)");
  plan->add_option("--model", common.model, "rank by the flow-level simulation (flow) or the alpha-beta model (analytic)")
      ->capture_default_str();
  plan->add_option("--gpu", common.gpu, "GPU profile for --model flow: h100, h200, a100")->capture_default_str();
  plan->add_flag("--exhaustive", common.exhaustive,
                 "check and price every schedule; by default one whose time floor (its busiest stream's or link's own "
                 "work) is above the best time is set aside unpriced, since it cannot rank first");

  auto* write = app.add_subcommand("schedule", "generate a schedule and write its JSON form");
  add_problem_flags(*write, problem);
  add_schedule_flags(*write, schedule, true);
  write->add_option("--output,-o", common.output, "file to write (default: standard output)");

  auto* check = app.add_subcommand("check", "check a schedule file: coverage, matching, data, deadlock, ownership");
  check->add_option("file", common.file, "schedule JSON file")->required();
  check->add_flag("--json", common.json, "print one JSON object (with the cost when valid)");
  add_hardware_flags(*check, hardware);

  auto* simulation = app.add_subcommand("simulate", "run one schedule (or --collective) through the event-driven simulator");
  add_problem_flags(*simulation, problem);
  add_schedule_flags(*simulation, schedule, false);
  add_hardware_flags(*simulation, hardware);
  add_network_flags(*simulation, network);
  simulation->add_option("--fidelity", simulate.fidelity, "flow (max-min fair sharing) or alpha-beta (no contention)")
      ->capture_default_str();
  simulation->add_option("--gpu", simulate.gpu, "GPU profile: h100, h200, a100")->capture_default_str();
  simulation->add_option("--calibration", simulate.calibration, "calibration JSON written by `tessera calibrate`");
  simulation->add_option("--trace", simulate.trace, "write a Chrome trace (Perfetto) JSON file, times in microseconds");
  simulation->add_option("--ops-csv", simulate.ops_csv, "write one CSV row per op");
  simulation->add_option("--links-csv", simulate.links_csv, "write one CSV row per link");
  simulation->add_option("--collective", simulate.collective,
                         "simulate a standalone all-reduce, all-gather, reduce-scatter, all-to-all or send-recv");
  simulation->add_option("--algorithm", simulate.algorithm, "all-reduce algorithm: ring or tree (pipelined binary tree)")
      ->capture_default_str();
  simulation->add_option("--size", simulate.size,
                         "collective size in bytes: 1G or 1GiB = 2^30, 1GB = 1e9, 256M, 4096 (see Units below)")
      ->capture_default_str();
  simulation->add_option("--chunk", simulate.chunk,
                         "send point-to-point messages in chunks of this many bytes (e.g. 4M = 4MiB = 2^22, 4MB = 4e6)");
  simulation->add_option("--channels", simulate.channels,
                         "transfers moving into and out of each GPU at once (0: unlimited)")
      ->capture_default_str();
  simulation->add_flag("--json", common.json, "print one JSON object");
  simulation->add_flag("--per-gpu", common.per_gpu, "with --json: add per-GPU figures");
  simulation->footer(
      units + "\n\n"
      "The table alone is simulated from one period's programs wherever every GPU runs alike up to a shift the network\n"
      "looks the same under (a ring: GPU 0's on a uniform network, a leaf group's on h100-ib), with the same figures.\n"
      "--trace, --ops-csv and --json (its critical path names every op) simulate every GPU's program: at 1,024 GPUs\n"
      "a ring on h100-ib:128 is then 6 M ops, some 5 times the time and the memory.");

  auto add_backend_flags = [&](CLI::App& command) {
    command.add_option("--backend", execute.backend, "cpu (the reference executor) or cuda")->capture_default_str();
    command.add_option("--transport", execute.transport,
                       "cuda: local (every rank a virtual rank on GPU 0), nccl (rank r on GPU r, one process) or mpi (one process per rank under mpirun)")
        ->capture_default_str();
    command.add_option("--watchdog-s", execute.watchdog_s, "abort a run with no progress for this long, naming the op")
        ->capture_default_str();
    command.add_option("--seed", execute.seed, "seed of the random Q, K, V, dO")->capture_default_str();
    command.add_option("--devices", execute.devices,
                       "cpu: cores the ranks run on, each rank a thread (P ranks on min(P, this) cores; 0 = every core; more than "
                       "the machine has puts several on one core, which validate does not model)")
        ->capture_default_str();
  };
  auto* run = app.add_subcommand("run", "execute a schedule on real tensors and check the numerics against fp64");
  add_problem_flags(*run, problem);
  add_schedule_flags(*run, schedule, true);
  add_backend_flags(*run);
  run->add_option("--trace", execute.trace, "write the measured Chrome trace (the simulator's format)");
  run->add_flag("--json", common.json, "print one JSON object");
  run->add_option("--save", execute.save,
                  "write the inputs (Q, K, V, dO) and outputs (O, LSE, dQ, dK, dV) as NumPy .npy files in this folder");
  run->add_option("--load", execute.load, "run on the Q, K, V (and dO) .npy files in this folder instead of random inputs")
      ->excludes("--seed");

  auto* validate = app.add_subcommand("validate", "execute a schedule and print predicted versus measured times");
  add_problem_flags(*validate, problem);
  add_schedule_flags(*validate, schedule, true);
  add_hardware_flags(*validate, hardware);
  add_network_flags(*validate, network);
  add_backend_flags(*validate);
  validate->add_option("--calibration", execute.calibration, "calibration JSON written by `tessera calibrate`");
  validate->add_option("--gpu", execute.gpu, "GPU profile when no calibration is given")->capture_default_str();
  validate->add_option("--trace", execute.trace, "write the measured Chrome trace");
  validate->add_option("--speed-reference", execute.speed_reference,
                       "on: time the calibration's speed reference before and after the run and predict at the machine's "
                       "speed now (the calibrated compute and busy-devices curve scaled by it); compute: scale the compute only; "
                       "off: predict at the speed it was calibrated at")
      ->capture_default_str();
  validate->add_option("--repeats", execute.executions,
                       "timed executions, 1 to 100; more than 1 runs one untimed warm-up first; the speed reference is "
                       "timed before the first and after each, each execution predicted at the speed around it, and "
                       "the execution of median measured / predicted is compared (of median time with "
                       "--speed-reference off)")
      ->capture_default_str();
  validate->add_flag("--predict-only", execute.predict_only,
                     "print what validate would predict for the configuration the backend and transport would run "
                     "(P virtual ranks on one GPU for cuda/local), at the calibration's speed, and execute nothing: "
                     "no GPU needed");
  validate->add_flag("--json", common.json, "print one JSON object");

  auto* calibrate = app.add_subcommand("calibrate", "measure block attention speed and write the simulator's calibration file");
  add_problem_flags(*calibrate, problem);
  add_backend_flags(*calibrate);
  calibrate->add_option("--output,-o", execute.calibration, "calibration JSON to write")->required();
  calibrate->add_option("--sides", execute.sides, "block sides in tokens, at least three")->capture_default_str();
  calibrate->add_option("--repeats", execute.repeats, "timed runs per figure after a warm-up (the median is kept)")->capture_default_str();
  calibrate->add_option("--concurrency", execute.concurrency,
                        "ranks sharing one device: measure the throughput of 1..this many concurrent blocks")
      ->capture_default_str();
  calibrate->add_option("--concurrency-side", execute.concurrency_side,
                        "tokens: the side of those concurrent blocks (default: the middle of --sides); best the blocks "
                        "of the schedules to validate, e.g. 2048 for 32K tokens over 16 ranks");
  calibrate->add_option("--max-block-spread", execute.max_block_spread_percent,
                        "percent: time the blocks again while their widest interquartile range over the median is above "
                        "this (the machine changed speed during the timing)")
      ->capture_default_str();
  calibrate->add_option("--block-attempts", execute.block_attempts,
                        "timings of the blocks at most, the steadiest kept (1: never again; 1 to 20)")
      ->capture_default_str();
  NcclImportFlags nccl;
  calibrate->add_option("--from-nccl-tests", nccl.files,
                        "fit the link figures to these nccl-tests output tables (all_reduce_perf, all_gather_perf, "
                        "sendrecv_perf, alltoall_perf) instead of timing blocks");
  calibrate->add_option("--topology", nccl.topology,
                        "with --from-nccl-tests: also fit each level (intra-node, inter-node) of this cluster");
  calibrate->add_option("--level", nccl.level,
                        "with --topology: the level (intra-node or inter-node) of tables that do not name their hosts");

  auto* topology = app.add_subcommand("topo", "cluster networks: list presets, show or check one, export Graphviz");
  topology->add_option("action", topo.action, "list, show, check or dot")->required();
  topology->add_option("target", topo.target, "a preset (e.g. h100-ib:4, torus-4x4) or a YAML file");
  topology->add_option("--gpus", topo.gpus, "GPU count for presets that take one");
  topology->add_flag("--json", topo.json, "print one JSON object");

  // Experiments: sweeps (threads, or MPI ranks under mpirun) and figures.
  SweepFlags sweep_flags;
  auto* sweep = app.add_subcommand("sweep", "run a declarative sweep (points from a YAML spec) on all cores, or on MPI ranks");
  sweep->add_option("spec", sweep_flags.spec, "sweep spec (YAML)")->required();
  sweep->add_option("--out,-o", sweep_flags.out, "results directory (rerun the same command to resume)");
  sweep->add_option("--jobs,-j", sweep_flags.jobs, "worker threads per process (default: all hardware threads)");
  sweep->add_option("--limit", sweep_flags.limit, "evaluate at most this many new points, then stop (resumable)");
  sweep->add_flag("--quiet,-q", sweep_flags.quiet, "no progress line");
  sweep->add_flag("--count", sweep_flags.count, "print the number of points and exit");
  auto* schedule_cache = sweep->add_option("--schedule-cache", sweep_flags.schedule_cache,
                    "memory for checked schedules reused across points that differ only in network or hardware "
                    "fields (a size, e.g. 512MiB; 0: none)")
      ->capture_default_str();
  PlotFlags plot_flags;
  auto* plot = app.add_subcommand("plot", "draw a figure (SVG or PNG, headless) from a sweep's results.csv");
  plot->add_option("results", plot_flags.results, "results table (CSV written by tessera sweep)")->required();
  plot->add_option("--out,-o", plot_flags.out, "figure file (.svg or .png)");
  plot->add_option("--kind", plot_flags.kind, "line, bar, heatmap or winner")->capture_default_str();
  plot->add_option("--x", plot_flags.x, "column on the x axis (e.g. gpus, seq_tokens)")->required();
  plot->add_option("--y", plot_flags.y, "column on the y axis (e.g. time_s); heatmap/winner: the row category")->required();
  plot->add_option("--series", plot_flags.series, "one line (or bar) per value of this column; winner: the contenders");
  plot->add_option("--value", plot_flags.value, "heatmap/winner: the column that colours a cell");
  plot->add_option("--where", plot_flags.where, "keep rows with COLUMN=VALUE[,COLUMN=VALUE...]");
  plot->add_option("--aggregate", plot_flags.aggregate, "rows sharing a point: min, max or mean")->capture_default_str();
  plot->add_option("--title", plot_flags.title, "figure title");
  plot->add_option("--xlabel", plot_flags.xlabel, "x axis label (default: from the column, with its unit)");
  plot->add_option("--ylabel", plot_flags.ylabel, "y axis label (default: from the column, with its unit)");
  plot->add_flag("--logx", plot_flags.logx, "log2 x axis (default for gpus and seq_tokens)");
  plot->add_flag("--linear-x", plot_flags.linear_x, "linear x axis");
  plot->add_flag("--logy", plot_flags.logy, "log10 y axis (heatmap: log colour scale)");
  plot->add_option("--format", plot_flags.format, "svg or png (default: from the --out extension)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    // CLI11 echoes what was typed: made one printable line, long tokens cut, as UserError does.
    std::cerr << "tessera: " << tessera::printable_message(std::string(error.what()) + " (see `tessera --help`)") << "\n";
    return 2;
  }
  try {
    for (const CLI::App* command : app.get_subcommands()) {
      refuse_meaningless_flags(*command, problem, common);
      require_writable_outputs(*command);
      gpus_from_topology(*command, problem, network);
    }
    if (*sweep) {
      sweep_flags.schedule_cache_given = schedule_cache->count() > 0;
      return run_sweep_command(sweep_flags);
    }
    if (*plot) return run_plot(plot_flags);
    if (*schedules) return run_schedules(common);
    if (*cost) return run_cost(problem, schedule, hardware, network, common);
    if (*plan) return run_plan(problem, hardware, network, common);
    if (*topology) return run_topo(topo);
    if (*run) return run_execute(problem, schedule, execute, common);
    if (*validate) return run_validate(problem, schedule, hardware, network, execute, common);
    if (*calibrate && !nccl.files.empty()) return run_nccl_import(nccl, execute.calibration);
    if (*calibrate) return run_calibrate(problem, execute);
    if (*simulation) return run_simulate(problem, schedule, hardware, network, simulate, common);
    if (*write) return run_schedule(problem, schedule, common);
    if (*check) return run_check(hardware, common);
    std::cout << app.help();
    return 0;
  } catch (const tessera::UserError& error) {
    std::cerr << "tessera: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "tessera: internal error: " << error.what() << "\n";
    return 3;
  }
}
