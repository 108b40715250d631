// Sweeps under faults: SIGKILL at random moments, a disk that fills up (a file size limit),
// SIGTERM, directories that cannot be written, and damaged journal and state files; spec counts
// that are huge or wrap, values that are not finite, and results tables that do not parse. A
// killed or failed run must keep the rows it wrote, and the same command must then finish the
// sweep with a results.csv byte-identical to an uninterrupted run's.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(SWEEP_SCRATCH) / ("faults-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t count_lines(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

struct Result {
  int exit_code = -1;    // -1 when ended by a signal
  int signal = 0;        // the signal that ended it
  std::string err;
};

// Runs `tessera ARGS` through bash (so that `prefix` can set ulimits), stderr captured.
Result run(const std::string& arguments, const fs::path& dir, const std::string& prefix = "") {
  const fs::path err = dir / "stderr.txt";
  const std::string command = "bash -c '" + prefix + "exec " + TESSERA_CLI + " " + arguments + "' > /dev/null 2> " +
                              err.string();
  const int status = std::system(command.c_str());
  Result result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  // bash reports a child ended by signal N as 128 + N.
  if (result.exit_code > 128) result.signal = result.exit_code - 128;
  result.err = slurp(err);
  return result;
}

// One line "tessera: ...\n" that names `place`.
void check_one_line_naming(const Result& result, const std::string& place) {
  INFO(result.err);
  CHECK(result.exit_code == 2);
  CHECK(count_lines(result.err) == 1);
  CHECK(result.err.rfind("tessera: ", 0) == 0);
  CHECK(result.err.find(place) != std::string::npos);
}

pid_t start(const std::vector<std::string>& arguments) {
  const pid_t child = fork();
  if (child == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::vector<char*> argv{const_cast<char*>(TESSERA_CLI)};
    for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    execv(TESSERA_CLI, argv.data());
    _exit(127);
  }
  return child;
}

// 240 small flow simulations: a few seconds on two threads, so kills land all along the run.
const char* kSpec =
    "fixed:\n  mask: causal\n  pass: both\n  fidelity: flow\n"
    "axes:\n  - gpus: [8, 16, 32]\n  - seq: [32K, 64K, 128K, 256K, 512K]\n  - algo: [ring, mesh, usp, attention2d]\n"
    "  - batch: [1, 2, 3, 4]\n";
constexpr size_t kSpecPoints = 3 * 5 * 4 * 4;

// The clean run's tables, made once per test binary run.
const fs::path& clean_run() {
  static const fs::path dir = [] {
    const fs::path base = scratch("clean");
    write(base / "spec.yaml", kSpec);
    const Result result = run("sweep " + (base / "spec.yaml").string() + " -q --jobs 2 --out " +
                                  (base / "out").string(), base);
    REQUIRE(result.exit_code == 0);
    return base / "out";
  }();
  return dir;
}

void check_same_tables(const fs::path& out) {
  const std::string csv = slurp(out / "results.csv");
  CHECK(count_lines(csv) == kSpecPoints + 1);
  CHECK(csv == slurp(clean_run() / "results.csv"));
  CHECK(slurp(out / "results.jsonl") == slurp(clean_run() / "results.jsonl"));
  CHECK(count_lines(slurp(out / "journal.jsonl")) == kSpecPoints);  // no point twice
}

}  // namespace

TEST_CASE("a sweep killed with SIGKILL at 20 random moments ends byte-identical", "[sweep][faults][kill]") {
  const fs::path clean = clean_run();
  const fs::path dir = scratch("kill20");
  write(dir / "spec.yaml", kSpec);
  // The clean run's wall time spreads the kills: each run lives a random sixteenth of it on
  // average (the 20 together about the clean run), so the 20 kills fall from the start (spec reading) through the last rows and the
  // tables at the end.
  const auto begin = std::chrono::steady_clock::now();
  REQUIRE(run("sweep " + (dir / "spec.yaml").string() + " -q --jobs 2 --out " + (dir / "timing").string(), dir)
              .exit_code == 0);
  const double clean_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  std::mt19937 random(20240917);
  std::uniform_real_distribution<double> delay_ms(0, clean_ms / 8);
  const fs::path out = dir / "out";
  int killed = 0;
  size_t previous_rows = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {
    const pid_t child = start({"sweep", (dir / "spec.yaml").string(), "-q", "--jobs", "2", "--out", out.string()});
    REQUIRE(child > 0);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delay_ms(random) * 1000)));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    killed += WIFSIGNALED(status);
    if (WIFEXITED(status)) CHECK(WEXITSTATUS(status) == 0);  // it finished before the kill
    // The rows written survive every kill (at most a torn last line, cut off by the next run).
    const size_t rows = count_lines(slurp(out / "journal.jsonl"));
    CHECK(rows >= previous_rows);
    previous_rows = rows;
  }
  CHECK(killed >= 10);
  const Result last = run("sweep " + (dir / "spec.yaml").string() + " -q --jobs 2 --out " + out.string(), dir);
  REQUIRE(last.exit_code == 0);
  check_same_tables(out);
}

TEST_CASE("a sweep whose disk fills up exits 2 and resumes byte-identical", "[sweep][faults][disk]") {
  const fs::path clean = clean_run();
  const fs::path dir = scratch("disk");
  write(dir / "spec.yaml", kSpec);
  const std::string sweep = "sweep " + (dir / "spec.yaml").string() + " -q --jobs 2 --out ";
  const size_t journal_kb = fs::file_size(clean / "journal.jsonl") / 1024;
  REQUIRE(journal_kb > 64);
  // ulimit -f is in KiB; SIGXFSZ ignored turns the limit into EFBIG, as a full disk's ENOSPC.
  // 1 KiB: sweep.json does not fit; then the journal fills at several points of the run, each
  // run going on from the previous one; then each size again from an empty directory.
  const std::vector<size_t> sizes = {1, 8, journal_kb / 4, journal_kb / 2, journal_kb - 4};
  const fs::path chained = dir / "chained";
  for (const size_t kb : sizes) {
    const Result full = run(sweep + chained.string(), dir, "ulimit -f " + std::to_string(kb) + "; trap \"\" XFSZ; ");
    INFO("ulimit -f " << kb);
    check_one_line_naming(full, chained.string());
    CHECK(full.err.find("File too large") != std::string::npos);
    if (kb > 1) {
      CHECK(full.err.find("journal.jsonl: cannot write") != std::string::npos);
      CHECK(full.err.find("run the same command again to resume") != std::string::npos);
    }
    // What is there is whole: every line complete (the torn tail was cut back).
    const std::string journal = slurp(chained / "journal.jsonl");
    CHECK((journal.empty() || journal.back() == '\n'));
    CHECK_FALSE(fs::exists(chained / "sweep.json.tmp"));
  }
  REQUIRE(run(sweep + chained.string(), dir).exit_code == 0);
  check_same_tables(chained);

  // From an empty directory: the journal fills; or the journal fits and results.jsonl (the
  // largest table) does not, so every row is journaled and only the tables are missing.
  const size_t jsonl_kb = fs::file_size(clean / "results.jsonl") / 1024;
  REQUIRE(jsonl_kb > journal_kb + 8);
  for (const size_t kb : {journal_kb / 3, journal_kb - 2, journal_kb + 4}) {
    const fs::path out = dir / ("fresh-" + std::to_string(kb));
    const Result full = run(sweep + out.string(), dir, "ulimit -f " + std::to_string(kb) + "; trap \"\" XFSZ; ");
    check_one_line_naming(full, (out / (kb < journal_kb ? "journal.jsonl" : "results.jsonl.tmp")).string());
    CHECK(full.err.find("run the same command again to resume") != std::string::npos);
    CHECK_FALSE(fs::exists(out / "results.jsonl.tmp"));
    REQUIRE(run(sweep + out.string(), dir).exit_code == 0);
    check_same_tables(out);
  }
}

TEST_CASE("SIGTERM stops a sweep cleanly, says how to resume, and the resume ends byte-identical",
          "[sweep][faults][sigterm]") {
  clean_run();
  const fs::path dir = scratch("sigterm");
  write(dir / "spec.yaml", kSpec);
  const fs::path out = dir / "out";
  const fs::path err = dir / "err.txt";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen(err.c_str(), "w", stderr);
    execl(TESSERA_CLI, TESSERA_CLI, "sweep", (dir / "spec.yaml").c_str(), "--out", out.c_str(), "--jobs", "2", "-q",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && count_lines(slurp(out / "journal.jsonl")) < 20)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);
  // It exits 2, after saying how to resume.
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  const std::string message = slurp(err);
  INFO(message);
  CHECK(count_lines(message) == 1);
  CHECK(message.find("tessera: stopped by SIGTERM: ") == 0);
  CHECK(message.find("run the same command again to resume") != std::string::npos);
  const size_t rows = count_lines(slurp(out / "journal.jsonl"));
  CHECK(rows >= 20);
  CHECK(rows < kSpecPoints);
  CHECK(message.find(std::to_string(rows) + " of " + std::to_string(kSpecPoints) + " points are done") !=
        std::string::npos);
  // The in-flight points were journaled whole, and the tables written for what is done.
  CHECK(slurp(out / "journal.jsonl").back() == '\n');
  CHECK(count_lines(slurp(out / "results.csv")) == rows + 1);
  REQUIRE(run("sweep " + (dir / "spec.yaml").string() + " -q --jobs 2 --out " + out.string(), dir).exit_code == 0);
  check_same_tables(out);
}

TEST_CASE("an output directory that cannot be written stops the sweep with exit 2 naming it", "[sweep][faults]") {
  const fs::path dir = scratch("unwritable");
  write(dir / "spec.yaml", "fixed:\n  algo: ring\n  seq: 64K\naxes:\n  - gpus: [4, 8]\n");
  const std::string sweep = "sweep " + (dir / "spec.yaml").string() + " -q --out ";
  // A file where the directory should be.
  write(dir / "file", "x");
  check_one_line_naming(run(sweep + (dir / "file").string(), dir), "--out '" + (dir / "file").string() + "'");
  check_one_line_naming(run(sweep + (dir / "file" / "sub").string(), dir), "cannot create the directory");
  // The journal's name taken by a directory.
  fs::create_directories(dir / "taken" / "journal.jsonl");
  check_one_line_naming(run(sweep + (dir / "taken").string(), dir), (dir / "taken" / "journal.jsonl").string());
  // A directory without write permission (root ignores permissions; /proc refuses even root).
  const fs::path locked = geteuid() == 0 ? fs::path("/proc/self") : dir / "locked";
  if (geteuid() != 0) {
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  }
  const Result refused = run(sweep + locked.string(), dir);
  check_one_line_naming(refused, locked.string());
  if (geteuid() != 0) fs::permissions(locked, fs::perms::owner_all);
}

TEST_CASE("a damaged journal or state file is refused naming the file, line and field", "[sweep][faults][journal]") {
  const fs::path dir = scratch("journal");
  write(dir / "spec.yaml", "fixed:\n  algo: ring\n  seq: 64K\naxes:\n  - gpus: [4, 8, 16, 32]\n");
  const fs::path out = dir / "out";
  const std::string sweep = "sweep " + (dir / "spec.yaml").string() + " -q --out " + out.string();
  // One worker: the journal's lines in index order, which the damage below addresses by line
  // (with several, points finish, and are journaled, in whatever order the machine's load gives).
  REQUIRE(run(sweep + " --limit 3 --jobs 1", dir).exit_code == 0);
  const std::string good = slurp(out / "journal.jsonl");
  REQUIRE(count_lines(good) == 3);
  const std::string first = good.substr(0, good.find('\n') + 1);
  const std::string journal = (out / "journal.jsonl").string();
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  auto damaged = [&](const std::string& text, const std::string& place) {
    write(out / "journal.jsonl", text);
    check_one_line_naming(run(sweep, dir), place);
  };
  damaged(replace(good, "\"index\":0", "\"index\":\"x\""), journal + ":1: index: expected a whole number");
  damaged(replace(good, "\"index\":0,", ""), journal + ":1: index: missing");
  damaged(replace(good, "\"index\":1", "\"index\":-1"), journal + ":2: index: expected a whole number");
  damaged(replace(good, "\"index\":2", "\"index\":4"), journal + ":3: index: point 4 does not belong");
  damaged(good + first, journal + ":4: index: point 0 is already on line 1");
  damaged("garbage\n" + good, journal + ":1: not a journal line");
  damaged(replace(good, "\"row\":[\"0\",", "\"row\":[0,"), journal + ":1: row[0]: expected a string");
  damaged(replace(good, "\"row\":[\"0\",", "\"row\":["), journal + ":1: row: expected ");
  damaged(replace(good, "\"row\":[", "\"extra\":1,\"row\":["), journal + ":1: 'extra': unexpected field");
  damaged("[1,2]\n", journal + ":1: expected a JSON object");
  damaged(replace(good, "\"index\":1", "\"index\":1e999"), journal + ":2: not a journal line");

  // Damage a crash can cause is repaired: a torn last line, NUL bytes where unsynced data was.
  write(out / "journal.jsonl", good + "{\"index\":3,\"inp");
  REQUIRE(run(sweep + " --limit 1", dir).exit_code == 0);
  CHECK(count_lines(slurp(out / "journal.jsonl")) == 4);
  write(out / "journal.jsonl", good + std::string(300, '\0'));
  REQUIRE(run(sweep, dir).exit_code == 0);
  CHECK(count_lines(slurp(out / "journal.jsonl")) == 4);
  write(out / "journal.jsonl", good + std::string(40, '\0') + "\"]}\n");
  REQUIRE(run(sweep, dir).exit_code == 0);
  CHECK(count_lines(slurp(out / "journal.jsonl")) == 4);

  // The state file.
  const std::string state = slurp(out / "sweep.json");
  const std::string state_path = (out / "sweep.json").string();
  auto damaged_state = [&](const std::string& text, const std::string& place) {
    write(out / "sweep.json", text);
    check_one_line_naming(run(sweep, dir), place);
  };
  damaged_state(replace(state, "\"points\": 4", "\"points\": \"x\""), state_path + ": points: expected a whole number");
  damaged_state(replace(state, "\"points\": 4", "\"points\": 5"), state_path + ": points: 5, but this spec has 4");
  damaged_state(replace(state, "\"complete\": true", "\"complete\": 1"), state_path + ": complete: expected true or false");
  damaged_state(replace(state, "\"tool\": \"tessera\",", ""), state_path + ": tool: missing");
  damaged_state(replace(state, "\"inputs_hash\": \"", "\"inputs_hash\": \"f"), "holds the results of other inputs");
  damaged_state("{\"tool\": \"tessera\",", state_path + ":1:");
  damaged_state("[]", state_path + ": expected a JSON object");
  write(out / "sweep.json", state);
  REQUIRE(run(sweep, dir).exit_code == 0);
}

TEST_CASE("a spec of 1e16 points is counted at once; one whose count wraps is refused", "[sweep][faults][count]") {
  const fs::path dir = scratch("count");
  // Eight axes of 100 values each: 100^8 = 1e16 points. The values repeat; only the count
  // matters, and it must come without enumerating a point.
  auto axis = [](const std::string& field, const std::string& value, size_t length) {
    std::string text = "  - " + field + ": [";
    for (size_t k = 0; k < length; ++k) text += (k ? ", " : "") + value;
    return text + "]\n";
  };
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"gpus", "8"},     {"seq", "64K"},    {"batch", "1"},    {"heads", "32"},
      {"kv_heads", "8"}, {"head_dim", "64"}, {"window", "4K"}, {"channels", "2"}};
  std::string huge = "fixed:\n  algo: ring\naxes:\n";
  for (const auto& [field, value] : fields) huge += axis(field, value, 100);
  write(dir / "huge.yaml", huge);
  const auto begin = std::chrono::steady_clock::now();
  Result counted = run("sweep " + (dir / "huge.yaml").string() + " --count > " + (dir / "count.txt").string(), dir);
  CHECK(counted.exit_code == 0);
  CHECK(slurp(dir / "count.txt") == "10000000000000000\n");
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(10));
  // A skip rule: the batch axis holds 1 thirty times and 2 seventy times; skipping batch 1 on
  // 8 GPUs... every point has 8 GPUs, so 30 % of the points go: 7e15 remain.
  std::string skipped = "fixed:\n  algo: ring\naxes:\n";
  for (const auto& [field, value] : fields)
    if (field != "batch") skipped += axis(field, value, 100);
  std::string batch = "  - batch: [";
  for (int k = 0; k < 100; ++k) batch += std::string(k ? ", " : "") + (k < 30 ? "1" : "2");
  skipped += batch + "]\nskip:\n  - {batch: 1, gpus: 8}\n  - {batch: 1, seq: 64K}\n";
  write(dir / "skipped.yaml", skipped);
  counted = run("sweep " + (dir / "skipped.yaml").string() + " --count > " + (dir / "count.txt").string(), dir);
  CHECK(counted.exit_code == 0);
  CHECK(slurp(dir / "count.txt") == "7000000000000000\n");
  // Running it is refused before any point is enumerated, with the estimate and the limit.
  const Result run_huge = run("sweep " + (dir / "huge.yaml").string() + " -q --out " + (dir / "out").string(), dir);
  check_one_line_naming(run_huge, (dir / "huge.yaml").string() + ": a sweep of 10000000000000000 points needs about");
  CHECK_FALSE(fs::exists(dir / "out" / "journal.jsonl"));
  // 300^8 = 6.6e19 > 2^64: the count would wrap; it is refused, never printed as a small number.
  std::string wraps = "fixed:\n  algo: ring\naxes:\n";
  for (const auto& [field, value] : fields) wraps += axis(field, value, 300);
  write(dir / "wraps.yaml", wraps);
  check_one_line_naming(run("sweep " + (dir / "wraps.yaml").string() + " --count", dir),
                        (dir / "wraps.yaml").string() + ": the number of points");
  check_one_line_naming(run("sweep " + (dir / "wraps.yaml").string() + " -q --out " + (dir / "out").string(), dir),
                        "is too large");
  // --count runs nothing, so it takes no flag of a run.
  check_one_line_naming(run("sweep " + (dir / "huge.yaml").string() + " --count --out x", dir), "--out");
  check_one_line_naming(run("sweep " + (dir / "huge.yaml").string() + " --count --limit 3", dir), "--limit");
  check_one_line_naming(run("sweep " + (dir / "huge.yaml").string() + " --out x --jobs -1", dir), "--jobs");
}

TEST_CASE("infinite or NaN rates in a spec are refused naming the field; a name that is not UTF-8 is written",
          "[sweep][faults][spec]") {
  const fs::path dir = scratch("spec");
  const std::string base = "fixed:\n  algo: ring\n  seq: 64K\n  gpus: 8\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  latency_us: inf\n", "s.yaml:5: fixed.latency_us: 'inf' is not a finite number"},
      {"  overhead_us: nan\n", "s.yaml:5: fixed.overhead_us: 'nan' is not a finite number"},
      {"  peak_tflops: infinity\n", "s.yaml:5: fixed.peak_tflops: 'infinity' is not a finite number"},
      {"  bandwidth: infGB/s\n", "s.yaml:5: fixed.bandwidth:"},
      {"  bandwidth_gbps: inf\n", "s.yaml:5: fixed.bandwidth_gbps: 'inf' is not a"},
      {"axes:\n  - hbm_gbps: [NaN, 1000]\n", "s.yaml:6: axes[0].hbm_gbps[0]: 'NaN' is not a"},
      {"axes:\n  - latency_us: [1, -inf]\n", "s.yaml:6: axes[0].latency_us[1]: '-inf' is not a finite number"},
  };
  for (const auto& [line, place] : cases) {
    write(dir / "s.yaml", base + line);
    INFO(line);
    check_one_line_naming(run("sweep s.yaml --count", dir, "cd " + dir.string() + "; "), place);
  }
  // A sweep named by a file whose name is not UTF-8 (the name defaults to the file's stem): its
  // sweep.json is written with U+FFFD for the bad byte, not a crash of the JSON writer. (A
  // `name:` that is not UTF-8 is refused by the YAML reader, naming the file.)
  const fs::path bad_name = dir / "bad\xff.yaml";
  write(bad_name, base);
  const Result named = run("sweep \"" + bad_name.string() + "\" -q --out " + (dir / "named").string(), dir);
  INFO(named.err);
  REQUIRE(named.exit_code == 0);
  CHECK(slurp(dir / "named" / "sweep.json").find("\"name\": \"bad\xef\xbf\xbd\"") != std::string::npos);
  write(dir / "raw.yaml", std::string("name: bad\xff\xfename\n") + base);
  check_one_line_naming(run("sweep raw.yaml -q --out raw", dir, "cd " + dir.string() + "; "), "raw.yaml:1: name:");
}

TEST_CASE("a cell that is not UTF-8 is in the tables as the journal reads it back, resumed or not",
          "[sweep][faults][spec]") {
  // The topology column holds the file's name: here a name with the byte FF, which JSON text
  // cannot hold. The journal line has U+FFFD in its place, and so must the tables, whether a
  // run makes them from the rows it keeps (one rank) or from the journal it resumed from.
  const fs::path dir = scratch("utf8");
  const std::string base = "fixed:\n  algo: ring\n  seq: 64K\n  gpus: 8\naxes:\n  - batch: [1, 2, 3]\n";
  write(dir / "topo\xff.yaml", "name: box\ndimensions:\n  - {kind: switch, size: 8, bandwidth: 450GB/s, latency_us: 1}\n");
  write(dir / "s.yaml", base + "  - topology: [\"topo\xff.yaml\"]\n");
  const std::string prefix = "cd " + dir.string() + "; ";
  REQUIRE(run("sweep s.yaml -q --out fresh", dir, prefix).exit_code == 0);
  REQUIRE(run("sweep s.yaml -q --out resumed --limit 1", dir, prefix).exit_code == 0);
  REQUIRE(run("sweep s.yaml -q --out resumed", dir, prefix).exit_code == 0);
  for (const char* out : {"fresh", "resumed"}) {
    INFO(out);
    const std::string csv = slurp(dir / out / "results.csv"), jsonl = slurp(dir / out / "results.jsonl");
    CHECK(count_lines(csv) == 4);
    CHECK(csv.find("\xff") == std::string::npos);
    CHECK(jsonl.find("\xff") == std::string::npos);
    // Each row: ,topo<U+FFFD>.yaml, in the CSV and "topology":"topo<U+FFFD>.yaml" in the JSON lines.
    size_t rows = 0;
    for (size_t at = csv.find(",topo\xef\xbf\xbd.yaml,"); at != std::string::npos;
         at = csv.find(",topo\xef\xbf\xbd.yaml,", at + 1))
      ++rows;
    CHECK(rows == 3);
    CHECK(count_lines(jsonl) == 3);
    rows = 0;
    for (size_t at = jsonl.find("\"topology\":\"topo\xef\xbf\xbd.yaml\""); at != std::string::npos;
         at = jsonl.find("\"topology\":\"topo\xef\xbf\xbd.yaml\"", at + 1))
      ++rows;
    CHECK(rows == 3);
  }
  CHECK(slurp(dir / "resumed" / "results.csv") == slurp(dir / "fresh" / "results.csv"));
}

TEST_CASE("a results table that does not parse is refused naming the file and line", "[sweep][faults][csv]") {
  const fs::path dir = scratch("csv");
  const std::string header = "index,gpus,algo,seq_tokens,status,time_s\n";
  const std::string good = header + "0,8,ring,65536,ok,0.5\n1,16,ring,65536,ok,0.25\n";
  write(dir / "good.csv", good);
  REQUIRE(run("plot good.csv --x gpus --y time_s -o good.svg", dir, "cd " + dir.string() + "; ").exit_code == 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {header + "0,8,ring,65536,ok,0.5\n1,16,ring,ok,0.25\n", "bad.csv:3: 5 fields, expected 6"},
      {header + "0,8,ring,65536,ok,0.5\n1,16,ring,65536,ok,fast\n", "bad.csv:3: time_s: 'fast' is not a number"},
      {header + "0,8,ring,65536,ok,0.5\nx,16,ring,65536,ok,0.25\n", "bad.csv:3: index: 'x' is not a number"},
      {header + "0,8,\"ring,65536,ok,0.5\n", "bad.csv:2: a quoted field is not closed"},
      {header + "0,8,\"ring\"x,65536,ok,0.5\n", "bad.csv:2: text after a closing quote"},
      {"index,gpus,,time_s\n", "bad.csv:1: column 3 of the header has no name"},
      {"index,gpus,gpus,time_s\n", "bad.csv:1: column 'gpus' appears twice"},
      {"", "bad.csv: empty file"},
  };
  for (const auto& [text, place] : cases) {
    write(dir / "bad.csv", text);
    INFO(text);
    check_one_line_naming(run("plot bad.csv --x gpus --y time_s -o bad.svg", dir, "cd " + dir.string() + "; "),
                          place);
  }
  // A column plotted as a value that holds text, in a file tessera did not write.
  write(dir / "other.csv", "gpus,speed\n8,1\n16,quick\n");
  check_one_line_naming(run("plot other.csv --x gpus --y speed -o o.svg", dir, "cd " + dir.string() + "; "),
                        "other.csv:3: speed: 'quick' is not a number");
  check_one_line_naming(run("plot missing.csv --x gpus --y speed -o o.svg", dir, "cd " + dir.string() + "; "),
                        "missing.csv: cannot read the results table");
}
