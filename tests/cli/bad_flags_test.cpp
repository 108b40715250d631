// Bad command-line flags, end to end, one class per test case: each bad value exits 2 with one
// line on stderr that names the flag (never an internal error, a wrapped figure or a silently
// ignored flag), and the outputs whose precision and units are promised read back as promised.
#include <catch2/catch.hpp>

#include <charconv>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"
#include "common/scratch.hpp"

using cli_test::lines;
using cli_test::Run;
using cli_test::slurp;
using cli_test::tessera;
using test_support::scratch_path;

namespace {

struct Refusal {
  std::string arguments;
  std::string names;  // what the one line must contain: the flag
};

void require_refused(const std::vector<Refusal>& cases) {
  for (const Refusal& refusal : cases) {
    const Run run = tessera(refusal.arguments);
    INFO("tessera " << refusal.arguments << "\n  exit " << run.exit_code << ", stderr: " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(lines(run.err) == 1);
    CHECK(run.err.rfind("tessera: ", 0) == 0);
    CHECK(run.err.find("internal error") == std::string::npos);
    CHECK(run.err.size() < 600);
    CHECK(run.err.find(refusal.names) != std::string::npos);
  }
}

// A small problem that costs in milliseconds.
const std::string kSmall = " --gpus 4 --seq 4K --heads 4 --kv-heads 4 --head-dim 16";

}  // namespace

TEST_CASE("sizes whose products wrap 64 bits are refused, naming the flag", "[cli][bad-flags]") {
  require_refused({
      {"cost --algo ring --batch 9223372036854775807" + kSmall, "--batch"},
      {"cost --algo ring --batch 1G --seq 1M", "--batch"},
      {"cost --algo ring --gpus 4 --seq 4K --heads 4G --kv-heads 4G", "--heads"},
      {"cost --algo ring --gpus 4 --seq 4K --head-dim 9223372036854775807", "--head-dim"},
      {"plan --model analytic --gpus 4 --seq 4K --head-dim-v 1T", "--head-dim"},
      {"cost --algo ring --gpus 4 --seq 9223372036854775807", "--seq"},
      {"cost --algo ring --gpus 4 --seq 4G", "--seq"},
      {"cost --algo ring --seq 99999999999999999999", "--seq"},
      {"cost --algo ring --seq 9999999999T", "--seq"},
      // Document lengths that sum past 2^63 (and wrap back to --seq in 64-bit arithmetic).
      {"cost --algo ring --gpus 4 --seq 4K --mask documents --documents 9223372036854775807,4097", "--documents"},
      {"cost --algo ring --gpus 4 --seq 4K --mask documents --documents 8E,4K", "--documents"},
      {"cost --algo ring --gpus 4 --seq 4K --mask sliding-window --window 9223372036854775807", "--window"},
      {"cost --algo ring --gpus 4096K --seq 4K", "--gpus"},
      {"cost --algo ring --gpus 4 --buffers 99999999999", "--buffers"},
  });
}

TEST_CASE("numbers that are not finite or out of range are refused at their flag", "[cli][bad-flags]") {
  std::vector<Refusal> cases;
  const std::string cost = "cost --algo ring" + kSmall + " ";
  const std::string simulate = "simulate --algo ring" + kSmall + " ";
  for (const char* value : {"inf", "-inf", "nan", "1e999", "-1", "1e300"}) {
    for (const char* flag : {"--latency-us", "--launch-us", "--overhead-us", "--nvlink-message-us",
                             "--network-message-us"}) {
      cases.push_back({cost + flag + " " + value, flag});
      cases.push_back({simulate + flag + " " + value, flag});
    }
    for (const char* flag : {"--peak-tflops", "--efficiency", "--bandwidth-gbps", "--hbm-gbps"})
      cases.push_back({cost + flag + " " + value, flag});
  }
  for (const char* value : {"0", "1e-300", "1.5"}) cases.push_back({cost + "--efficiency " + value, "--efficiency"});
  for (const char* value : {"0", "1e-300", "1e7"}) cases.push_back({cost + "--peak-tflops " + value, "--peak-tflops"});
  for (const char* value : {"1e-300GB/s", "1e400GB/s", "1e30GB/s", "nanGB/s", "infGB/s"}) {
    cases.push_back({cost + "--bandwidth " + value, "--bandwidth"});
    cases.push_back({cost + "--hbm-bandwidth " + value, "--hbm-bandwidth"});
  }
  cases.push_back({"simulate --collective all-reduce --gpus 8 --latency-us inf", "--latency-us"});
  cases.push_back({"simulate --collective all-reduce --gpus 8 --bandwidth 1e-300GB/s", "--bandwidth"});
  cases.push_back({"plan --model analytic --gpus 4 --seq 4K --overhead-us nan", "--overhead-us"});
  cases.push_back({"run --algo ring --gpus 2 --seq 64 --backend cuda --watchdog-s nan", "--watchdog-s"});
  cases.push_back({"run --algo ring --gpus 2 --seq 64 --backend cuda --watchdog-s inf", "--watchdog-s"});
  cases.push_back({simulate + "--channels -1", "--channels"});
  cases.push_back({"plan --gpus 4 --seq 4K --top -1", "--top"});
  require_refused(cases);
}

TEST_CASE("a flag that means nothing in the command is refused, not ignored", "[cli][bad-flags]") {
  const std::string collective = "simulate --collective all-reduce --size 1M --gpus 8 ";
  const std::string simulate = "simulate --algo ring" + kSmall + " ";
  require_refused({
      // Values of a flag that the generator would otherwise not look at.
      {"cost --algo ring --variant bogus" + kSmall, "--variant"},
      {"cost --algo attention2d --variant bogus" + kSmall, "--variant"},
      {"cost --algo mesh --variant bogus" + kSmall, "--variant"},
      {"cost --algo all-gather --variant pass-q" + kSmall, "--variant"},
      {"cost --algo ulysses --variant ring" + kSmall, "--variant"},
      {"cost --algo ring --tile 2x2" + kSmall, "--tile"},
      {"cost --algo all-gather --tile 2x2" + kSmall, "--tile"},
      {"cost --algo ring --input x.json" + kSmall, "--input"},
      {"schedule --algo ring --variant bogus" + kSmall, "--variant"},
      {"simulate --algo mesh --variant bogus" + kSmall, "--variant"},
      {"cost --algo warp-drive" + kSmall, "--algo"},
      // Flags with no meaning beside another.
      {collective + "--placement bogus --topology h100-ib:1", "--placement"},
      {collective + "--links-csv links.csv", "--links-csv"},
      {simulate + "--placement bogus", "--placement"},
      {"cost --algo ring --gpus 8 --seq 4K --topology h100-ib:1 --placement bogus", "--placement"},
      {"cost --algo ring --gpus 8 --seq 4K --topology h100-ib:1 --placement list:0,1", "--placement"},
      {"cost --algo ring --gpus 8 --seq 4K --routing ecmp", "--routing"},
      {collective + "--ops-csv ops.csv", "--ops-csv"},
      {collective + "--trace trace.json", "--trace"},
      {collective + "--chunk 0", "--chunk"},
      {collective + "--chunk -4M", "--chunk"},
      {collective + "--seq 4K", "--seq"},
      {collective + "--algo ring", "--algo"},
      {collective + "--overhead-us 3", "--overhead-us"},
      {collective + "--size 0", "--size"},
      {collective + "--size -1G", "--size"},
      {collective + "--size 1Gb", "--size"},
      {collective + "--size 1.5G", "--size"},
      {simulate + "--size 1G", "--size"},
      {simulate + "--algorithm tree", "--algorithm"},
      {simulate + "--chunk 0", "--chunk"},
      {simulate + "--chunk -1", "--chunk"},
      {simulate + "--chunk 4Q", "--chunk"},
      {simulate + "--peak-tflops 500", "--peak-tflops"},
      {simulate + "--gpu h100 --calibration none.json", "--gpu"},
      {simulate + "--per-gpu", "--per-gpu"},
      {simulate + "--fidelity psychic", "--fidelity"},
      {simulate + "--gpu tpu", "--gpu"},
      {"cost --algo ring --per-gpu" + kSmall, "--per-gpu"},
      {"cost --algo ring --window 1K" + kSmall, "--window"},
      {"cost --algo ring --topology h100-ib:1 --bandwidth 100GB/s" + kSmall, "--bandwidth"},
      {"cost --algo ring --topology h100-ib:1 --latency-us 3" + kSmall, "--latency-us"},
      {"plan --model analytic --gpu a100 --gpus 4 --seq 4K", "--gpu"},
      {"run --algo ring --gpus 2 --seq 64 --transport nccl", "--transport"},
      {"calibrate -o cal.json --seq 4K", "--seq"},
      {"calibrate -o cal.json --sides 1T,2T,4T", "--sides"},
      {"calibrate -o cal.json --concurrency-side 0", "--concurrency-side"},
      {"calibrate -o cal.json --concurrency-side pigeon", "--concurrency-side"},
      {"calibrate -o cal.json --concurrency-side 1T", "--concurrency-side"},
  });
}

TEST_CASE("parse errors and long tokens give one short line", "[cli][bad-flags]") {
  // 100,000 characters: one argument may hold at most 128 KiB (Linux's MAX_ARG_STRLEN).
  const std::string long_token(100000, 'x');
  require_refused({
      {"cost --algo ring --seq " + long_token, "--seq"},
      {"cost --algo " + long_token + kSmall, "--algo"},
      {"cost --algo ring --peak-tflops " + long_token, "--peak-tflops"},
      {"cost --algo ring --no-such-flag-" + long_token, "no-such-flag"},
      {"cost --algo ring --bandwidth " + long_token + "GB/s", "--bandwidth"},
      {"cost --algo ring --gpus \"$(printf '\\377\\376')\"", "--gpus"},
  });
}

TEST_CASE("a count takes K, M, G, T as powers of 1024; a byte size also SI and binary units", "[cli][bad-flags]") {
  // 1G = 1GiB = 2^30 bytes; 1GB = 1e9 bytes. The JSON's size_bytes is the size in bytes.
  struct Case {
    const char* size;
    double bytes;
  };
  for (const Case& entry : {Case{"1G", 1073741824.0}, Case{"1GiB", 1073741824.0}, Case{"1GB", 1e9},
                            Case{"256M", 268435456.0}, Case{"4096", 4096.0}, Case{"2kB", 2000.0}, Case{"2KiB", 2048.0},
                            Case{"3B", 3.0}, Case{"1g", 1073741824.0}}) {
    const Run run = tessera(std::string("simulate --collective all-gather --gpus 4 --json --size ") + entry.size);
    INFO(entry.size << ": " << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(nlohmann::json::parse(run.out)["size_bytes"].get<double>() == entry.bytes);
  }
  // Sequence lengths: 4K tokens = 4096, as the problem's JSON shows; a byte unit is no count.
  const Run schedule = tessera("schedule --algo ring --gpus 4 --seq 4K --heads 4 --kv-heads 4 --head-dim 16");
  REQUIRE(schedule.exit_code == 0);
  CHECK(nlohmann::json::parse(schedule.out)["problem"]["seq_len"].get<int64_t>() == 4096);
  require_refused({{"cost --algo ring --gpus 4 --seq 4KB", "--seq"}, {"cost --algo ring --gpus 4 --seq 4KiB", "--seq"}});
}

TEST_CASE("--ops-csv and --links-csv hold every double to the last bit", "[cli][bad-flags]") {
  // 3 x 5242880 bytes at a bandwidth of 7 GB/s: times whose decimals do not end after 6 digits.
  const std::string ops = scratch_path("bad_flags_ops.csv"), links = scratch_path("bad_flags_links.csv"),
                    trace = scratch_path("bad_flags_trace.json");
  const Run run = tessera("simulate --algo ring --gpus 4 --seq 10K --heads 4 --kv-heads 4 --head-dim 64 --bandwidth 7GB/s "
                          "--latency-us 3.3 --ops-csv " + ops + " --links-csv " + links + " --trace " + trace + " --json");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const double makespan_s = nlohmann::json::parse(run.out)["makespan_s"].get<double>();

  // Every number field: its text is the shortest that reads back as the same double.
  auto shortest = [](double value) {
    char text[32];
    return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
  };
  auto check_numbers = [&](const std::string& csv, std::vector<size_t> columns) {
    std::istringstream lines_in(csv);
    std::string line;
    std::getline(lines_in, line);  // header
    size_t rows = 0, long_numbers = 0;
    double latest_finish_s = 0;
    while (std::getline(lines_in, line)) {
      std::vector<std::string> fields;
      std::stringstream fields_in(line);
      for (std::string field; std::getline(fields_in, field, ',');) fields.push_back(field);
      for (size_t column : columns) {
        REQUIRE(column < fields.size());
        const double value = std::stod(fields[column]);
        CHECK(fields[column] == shortest(value));
        long_numbers += fields[column].size() > 7;
      }
      if (columns.size() == 3) latest_finish_s = std::max(latest_finish_s, std::stod(fields[8]));
      ++rows;
    }
    CHECK(rows > 0);
    CHECK(long_numbers > 0);  // some figure needs more than 6 digits, and has them
    return latest_finish_s;
  };
  // The last op finishes at the makespan: equal as doubles, read back from the CSV.
  CHECK(check_numbers(slurp(ops), {7, 8, 9}) == makespan_s);
  check_numbers(slurp(links), {2, 3, 4, 5});
  // The Chrome trace is JSON: it parses, and its durations are in microseconds.
  const auto events = nlohmann::json::parse(slurp(trace))["traceEvents"];
  double latest_us = 0;
  for (const auto& event : events)
    if (event["ph"] == "X") latest_us = std::max(latest_us, event["ts"].get<double>() + event["dur"].get<double>());
  CHECK(latest_us == Approx(makespan_s * 1e6).epsilon(1e-12));
}
