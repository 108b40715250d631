// End-to-end tests of `tessera sweep` and `tessera plot`: resume after a stop (--limit) and
// after a kill (SIGKILL in the middle of a run), the tables against a clean run, figures, and
// (tag [mpi], run by its own ctest entry when MPI is present) two MPI ranks against one process.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
}

// A fresh directory under the build tree for each test.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(SWEEP_SCRATCH) / ("cli-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string tessera() { return std::string(TESSERA_CLI); }

size_t count_lines(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

// index -> how many times it appears in the CSV's first column.
std::map<long, int> index_counts(const std::string& csv) {
  std::map<long, int> counts;
  std::istringstream stream(csv);
  std::string line;
  std::getline(stream, line);  // header
  while (std::getline(stream, line))
    if (!line.empty()) ++counts[std::stol(line.substr(0, line.find(',')))];
  return counts;
}

const char* kSmallSpec =
    "# 4 x 3 x 2 = 24 points, ulysses on 64 GPUs (32 heads) is not applicable\n"
    "fixed:\n  seq: 64K\n  mask: causal\n  pass: both\n"
    "axes:\n  - gpus: [8, 16, 32, 64]\n  - algo: [ring, mesh, ulysses]\n  - fidelity: [analytic, flow]\n"
    "figures:\n  - {name: time, kind: line, x: gpus, y: time_s, series: algo, where: fidelity=flow, format: svg}\n";

// Several seconds of flow simulations on one thread: room to kill it midway.
const char* kSlowSpec =
    "fixed:\n  mask: causal\n  pass: both\n  fidelity: flow\n"
    "axes:\n  - gpus: [16, 32, 64]\n  - seq: [64K, 128K, 256K, 512K, 1M]\n  - algo: [ring, mesh, usp, attention2d]\n"
    "  - batch: [1, 2, 3, 4]\n";

}  // namespace

TEST_CASE("tessera sweep writes one row per point, tables and figures", "[sweep][cli]") {
  const fs::path dir = scratch("basic");
  write(dir / "spec.yaml", kSmallSpec);
  REQUIRE(run(tessera() + " sweep " + (dir / "spec.yaml").string() + " --count > " + (dir / "count.txt").string()) == 0);
  CHECK(slurp(dir / "count.txt") == "24\n");
  REQUIRE(run(tessera() + " sweep " + (dir / "spec.yaml").string() + " --out " + (dir / "out").string() + " -q > " +
              (dir / "log.txt").string()) == 0);
  const std::string csv = slurp(dir / "out" / "results.csv");
  CHECK(count_lines(csv) == 25);
  const auto counts = index_counts(csv);
  CHECK(counts.size() == 24);
  CHECK(count_lines(slurp(dir / "out" / "results.jsonl")) == 24);
  // 2 ulysses points at 64 GPUs x 2 fidelities are recorded as not applicable.
  size_t skipped = 0, pos = 0;
  while ((pos = csv.find("skipped: ", pos)) != std::string::npos) ++skipped, ++pos;
  CHECK(skipped == 2);
  // not_applicable: drop leaves them out of the tables (they stay in the journal, so a resumed
  // run does not evaluate them again).
  write(dir / "drop.yaml", std::string(kSmallSpec) + "not_applicable: drop\n");
  REQUIRE(run(tessera() + " sweep " + (dir / "drop.yaml").string() + " --out " + (dir / "drop").string() +
              " -q > /dev/null") == 0);
  CHECK(count_lines(slurp(dir / "drop" / "results.csv")) == 23);
  CHECK(count_lines(slurp(dir / "drop" / "journal.jsonl")) == 24);
  const std::string meta = slurp(dir / "out" / "sweep.json");
  CHECK(meta.find("\"inputs_hash\"") != std::string::npos);
  CHECK(meta.find("\"complete\": true") != std::string::npos);
  CHECK(slurp(dir / "out" / "spec.yaml") == kSmallSpec);
  const std::string svg = slurp(dir / "out" / "figures" / "time.svg");
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("GPUs") != std::string::npos);
  CHECK(svg.find("time (s)") != std::string::npos);
}

TEST_CASE("a bad figure request stops the sweep before its first point", "[sweep][cli]") {
  const fs::path dir = scratch("badfigure");
  write(dir / "spec.yaml",
        "fixed:\n  algo: ring\n  gpus: 8\n  seq: 64K\nfigures:\n  - {name: a, x: gpus, y: colour}\n");
  CHECK(run(tessera() + " sweep " + (dir / "spec.yaml").string() + " --out " + (dir / "out").string() + " 2> " +
            (dir / "err.txt").string()) == 2);
  CHECK(slurp(dir / "err.txt").find("spec.yaml:6: figures[0].y: unknown column 'colour'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "journal.jsonl"));
}

TEST_CASE("a sweep stopped midway resumes with no lost and no duplicated rows", "[sweep][cli][resume]") {
  const fs::path dir = scratch("resume");
  write(dir / "spec.yaml", kSmallSpec);
  const std::string sweep = tessera() + " sweep " + (dir / "spec.yaml").string() + " -q --out ";
  REQUIRE(run(sweep + (dir / "clean").string() + " > /dev/null") == 0);
  const std::string clean = slurp(dir / "clean" / "results.csv");

  REQUIRE(run(sweep + (dir / "part").string() + " --limit 7 > /dev/null") == 0);
  CHECK(count_lines(slurp(dir / "part" / "journal.jsonl")) == 7);
  CHECK(slurp(dir / "part" / "sweep.json").find("\"complete\": false") != std::string::npos);
  REQUIRE(run(sweep + (dir / "part").string() + " --limit 5 --jobs 1 > /dev/null") == 0);
  CHECK(count_lines(slurp(dir / "part" / "journal.jsonl")) == 12);
  // A kill in the middle of a write leaves a torn last line; the next run cuts it off.
  {
    std::ofstream torn(dir / "part" / "journal.jsonl", std::ios::app);
    torn << "{\"index\":13,\"inputs_hash\":\"0";
  }
  REQUIRE(run(sweep + (dir / "part").string() + " > " + (dir / "log.txt").string()) == 0);
  CHECK(slurp(dir / "log.txt").find("12 done before, 12 evaluated") != std::string::npos);
  CHECK(count_lines(slurp(dir / "part" / "journal.jsonl")) == 24);
  const std::string resumed = slurp(dir / "part" / "results.csv");
  CHECK(resumed == clean);
  for (const auto& [index, times] : index_counts(resumed)) CHECK(times == 1);
  // Running a finished sweep again evaluates nothing and changes no row.
  REQUIRE(run(sweep + (dir / "part").string() + " > " + (dir / "log.txt").string()) == 0);
  CHECK(slurp(dir / "log.txt").find("24 done before, 0 evaluated") != std::string::npos);
  CHECK(slurp(dir / "part" / "results.csv") == clean);
  // A changed spec is refused in the same directory.
  write(dir / "spec.yaml", std::string(kSmallSpec) + "# changed\n");
  CHECK(run(sweep + (dir / "part").string() + " > /dev/null 2> " + (dir / "err.txt").string()) == 2);
  CHECK(slurp(dir / "err.txt").find("holds the results of other inputs") != std::string::npos);
}

TEST_CASE("a sweep killed with SIGKILL resumes where it stopped", "[sweep][cli][resume]") {
  const fs::path dir = scratch("kill");
  write(dir / "spec.yaml", kSlowSpec);
  const std::string spec = (dir / "spec.yaml").string();
  REQUIRE(run(tessera() + " sweep " + spec + " -q --out " + (dir / "clean").string() + " > /dev/null") == 0);
  const std::string clean = slurp(dir / "clean" / "results.csv");
  REQUIRE(count_lines(clean) == 241);

  const fs::path out = dir / "killed";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stdout);
    execl(TESSERA_CLI, TESSERA_CLI, "sweep", spec.c_str(), "--out", out.c_str(), "--jobs", "1", "-q",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once a few dozen rows are in, while it is still running.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  size_t rows = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    rows = count_lines(slurp(out / "journal.jsonl"));
    if (rows >= 30) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));  // it was killed, not finished
  const size_t kept = count_lines(slurp(out / "journal.jsonl"));
  CHECK(kept >= 30);
  CHECK(kept < 240);
  CHECK_FALSE(fs::exists(out / "results.csv"));  // the tables come at the end

  REQUIRE(run(tessera() + " sweep " + spec + " -q --out " + out.string() + " > " + (dir / "log.txt").string()) == 0);
  CHECK(slurp(dir / "log.txt").find(std::to_string(kept) + " done before, " + std::to_string(240 - kept) + " evaluated") !=
        std::string::npos);
  const std::string resumed = slurp(out / "results.csv");
  CHECK(resumed == clean);
  const auto counts = index_counts(resumed);
  CHECK(counts.size() == 240);
  for (const auto& [index, times] : counts) CHECK(times == 1);
  CHECK(count_lines(slurp(out / "journal.jsonl")) == 240);
}

TEST_CASE("a sweep's tables are the same bytes with the schedule cache, without it and under eviction",
          "[sweep][cli][schedule_cache]") {
  const fs::path dir = scratch("schedule-cache");
  // 3 schedules x 2 GPU counts x (3 bandwidths x 2 networks x 2 fidelities = 12 network points
  // per schedule) = 72 points; on h100-ib Mesh is planned for the placed rings.
  write(dir / "spec.yaml",
        "fixed:\n  seq: 32K\n  mask: causal\n  pass: both\n"
        "axes:\n  - algo: [ring, mesh, usp]\n  - gpus: [8, 16]\n  - bandwidth: [100Gb/s, 200Gb/s, 400Gb/s]\n"
        "  - topology: ['', h100-ib]\n  - fidelity: [analytic, flow]\n");
  const std::string spec = (dir / "spec.yaml").string();
  auto sweep = [&](const std::string& name, const std::string& flags) {
    REQUIRE(run(tessera() + " sweep " + spec + " --out " + (dir / name).string() + " -q " + flags + " > " +
                (dir / (name + ".txt")).string()) == 0);
    return slurp(dir / name / "results.csv") + slurp(dir / name / "results.jsonl");
  };
  // A bound that is not a size is refused before any point, naming the flag.
  CHECK(run(tessera() + " sweep " + spec + " --out " + (dir / "bad").string() + " -q --schedule-cache lots 2> " +
            (dir / "bad.txt").string()) == 2);
  CHECK(slurp(dir / "bad.txt").find("--schedule-cache: expected a size") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "bad" / "journal.jsonl"));
  // --count runs nothing, so a cache bound given with it would be ignored: refused instead.
  CHECK(run(tessera() + " sweep " + spec + " --count --schedule-cache 1GiB 2> " + (dir / "count.txt").string()) == 2);
  CHECK(slurp(dir / "count.txt").find("--schedule-cache: --count only prints the number of points") != std::string::npos);

  const std::string without = sweep("off", "--schedule-cache 0");
  CHECK(count_lines(without) == 1 + 72 + 72);
  CHECK(slurp(dir / "off.txt").find("schedules:") == std::string::npos);  // nothing was cached
  CHECK(sweep("on", "") == without);
  CHECK(sweep("small", "--schedule-cache 256KiB --jobs 2") == without);

  // The summary's counts: generated + reused is one per generation asked for; with the
  // default bound nothing is evicted, and with 256 KiB (a few 16-GPU schedules) some are.
  auto counts = [&](const std::string& name, bool evicts) {
    const std::string log = slurp(dir / (name + ".txt"));
    const size_t at = log.find("schedules: ");
    REQUIRE(at != std::string::npos);
    long generated = 0, reused = 0, evicted = 0, shared = 0;
    REQUIRE(std::sscanf(log.c_str() + at, "schedules: %ld generated, %ld reused, %ld evicted (--schedule-cache %*[^)]); %ld shared checks",
                        &generated, &reused, &evicted, &shared) == 4);
    // No two points differ in the batch alone, so no Mesh plan shares another batch's check.
    // Under eviction a plan may find its own batch's check still held by a point of the other
    // thread (evicted from the cache, not yet freed), and share that: counted, and timing-bound.
    if (!evicts) CHECK(shared == 0);
    return std::array<long, 3>{generated, reused, evicted};
  };
  const auto on = counts("on", false);
  // Without a topology a point asks for one schedule; on h100-ib a Mesh point asks twice (the
  // uniform plan that places its ranks, then the plan for the placed rings): 72 + 12 asks.
  // Held by rotation on h100-ib (scenario::generate), a schedule is asked for at its own period,
  // then again at the network's where that is larger: at 8 GPUs, one server, none is (its
  // NVSwitch looks the same from every GPU); at 16 GPUs, two servers, one server's 8 GPUs is
  // (sim/symmetric_period.hpp), so the 6 ring and the 12 Mesh asks there are asked twice: 102.
  CHECK(on[0] + on[1] == 102);
  // Distinct schedules. usp: one per GPU count (the bandwidth, the network and the fidelity are
  // not its, and at 8 and 16 GPUs its default split is u = P, one group, which no rotation
  // shortens). ring: GPU 0's program (core/schedule.hpp's ProgramForm::rotation), for every
  // point at 8 GPUs and the uniform network's at 16, and a server's programs for h100-ib's at 16.
  // mesh: one per bandwidth and fidelity on the uniform network (its planner weighs the link's
  // bandwidth, and under flow the GPU profile's block rate), held by rotation (one row of its GPU
  // grid), which the h100-ib points' first, uniform plans share at their own period, and at 16
  // GPUs hold again at a server's (6 more); then one placed plan per fidelity on h100-ib (its
  // rings run over h100-ib's links whatever the bandwidth field; the linear placement is the same
  // for every bandwidth), at 16 GPUs at both periods (4). At 8 GPUs 1 + 1 + 6 + 2 = 10, at 16
  // 1 + 2 + 6 + 6 + 4 = 19: 29 in all.
  CHECK(on[0] == 29);
  CHECK(on[2] == 0);
  const auto small = counts("small", true);
  CHECK(small[0] + small[1] == 102);
  CHECK(small[1] > 0);
  CHECK(small[2] > 0);
}

TEST_CASE("tessera plot draws line, bar, heatmap and winner figures", "[sweep][cli][plot]") {
  const fs::path dir = scratch("plot");
  write(dir / "spec.yaml",
        "fixed:\n  seq: 64K\n  mask: full\n  tile: all\naxes:\n  - gpus: [4, 8, 16]\n  - algo: [ring, mesh]\n");
  REQUIRE(run(tessera() + " sweep " + (dir / "spec.yaml").string() + " -q --out " + (dir / "out").string() +
              " > /dev/null") == 0);
  const std::string results = (dir / "out" / "results.csv").string();
  const std::string plot = tessera() + " plot " + results + " > /dev/null 2> " + (dir / "err.txt").string() + " ";
  REQUIRE(run(plot + "--x gpus --y time_s --series algo -o " + (dir / "line.svg").string()) == 0);
  const std::string line = slurp(dir / "line.svg");
  CHECK(line.find("<polyline") != std::string::npos);
  CHECK(line.find(">ring<") != std::string::npos);
  CHECK(line.find(">mesh<") != std::string::npos);
  REQUIRE(run(plot + "--kind bar --x gpus --y recv_bytes_max --series algo --title Volume -o " + (dir / "bar.svg").string()) == 0);
  CHECK(slurp(dir / "bar.svg").find(">Volume<") != std::string::npos);
  REQUIRE(run(plot + "--kind heatmap --x gpus --y tile --value time_s --where algo=mesh -o " + (dir / "heat.svg").string()) == 0);
  CHECK(slurp(dir / "heat.svg").find(">2x8<") != std::string::npos);
  REQUIRE(run(plot + "--kind winner --x gpus --y seq --series algo --value time_s -o " + (dir / "win.svg").string()) == 0);
  // Errors: an unknown column is named with the file's columns.
  CHECK(run(plot + "--x gpus --y colour -o " + (dir / "bad.svg").string()) == 2);
  CHECK(slurp(dir / "err.txt").find("no column 'colour'") != std::string::npos);
#ifdef TESSERA_TEST_PNG
  REQUIRE(run(plot + "--x gpus --y time_s --series algo -o " + (dir / "line.png").string()) == 0);
  const std::string png = slurp(dir / "line.png");
  REQUIRE(png.size() > 1000);
  CHECK(png.substr(1, 3) == "PNG");
#else
  CHECK(run(plot + "--x gpus --y time_s --format png -o " + (dir / "line.png").string()) == 2);
  CHECK(slurp(dir / "err.txt").find("without Qt 6 Svg") != std::string::npos);
#endif
}

#ifdef TESSERA_MPIEXEC
TEST_CASE("two MPI ranks give the same rows as one process", "[mpi]") {
  const fs::path dir = scratch("mpi");
  write(dir / "spec.yaml", kSmallSpec);
  const std::string spec = (dir / "spec.yaml").string();
  REQUIRE(run(tessera() + " sweep " + spec + " -q --out " + (dir / "one").string() + " > /dev/null") == 0);
  const std::string mpi = std::string(TESSERA_MPIEXEC) + " -np 2 --oversubscribe " + tessera() + " sweep " + spec +
                          " -q --jobs 1 --out ";
  REQUIRE(run(mpi + (dir / "two").string() + " > " + (dir / "log.txt").string() + " 2>&1") == 0);
  CHECK(slurp(dir / "log.txt").find("on 2 MPI ranks") != std::string::npos);
  CHECK(slurp(dir / "two" / "results.csv") == slurp(dir / "one" / "results.csv"));
  CHECK(slurp(dir / "two" / "results.jsonl") == slurp(dir / "one" / "results.jsonl"));
  // Stopped and resumed under MPI too.
  REQUIRE(run(mpi + (dir / "three").string() + " --limit 9 > /dev/null 2>&1") == 0);
  CHECK(count_lines(slurp(dir / "three" / "journal.jsonl")) == 9);
  REQUIRE(run(mpi + (dir / "three").string() + " > /dev/null 2>&1") == 0);
  CHECK(slurp(dir / "three" / "results.csv") == slurp(dir / "one" / "results.csv"));
}
#endif
