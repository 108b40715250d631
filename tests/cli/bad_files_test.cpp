// Bad input files, end to end: every file the command line reads as JSON (schedule files for
// `check` and `--algo file`, assignment matrices for `--algo assignment`, calibration files for
// `simulate` and `validate`) and the YAML files read through core/yaml_reader.hpp (topologies).
// The contract for each: exit 2 and one line on stderr that names the file and the field (or
// line:column for a syntax error) — never an internal error, a crash or a run that goes on.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"

using cli_test::lines;
using cli_test::Run;
using cli_test::tessera;
using nlohmann::json;
using test_support::scratch_path;

namespace {

void write_file(const std::string& name, const std::string& text) {
  std::ofstream(scratch_path(name), std::ios::binary) << text;
}

// Exit 2, one line "tessera: ..." of reasonable length, naming every one of `named`.
void require_refused(const Run& run, const std::vector<std::string>& named) {
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 2);
  CHECK(lines(run.err) == 1);
  CHECK(run.err.rfind("tessera: ", 0) == 0);
  CHECK(run.err.size() < 600);
  CHECK(run.out.empty());
  for (const std::string& text : named) CHECK(run.err.find(text) != std::string::npos);
}

// Sets an environment variable for the runs in one scope (the child inherits it).
struct ScopedEnvironment {
  std::string name;
  ScopedEnvironment(std::string variable, const std::string& value) : name(std::move(variable)) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnvironment() { ::unsetenv(name.c_str()); }
};

// A valid 4-GPU ring schedule as the CLI writes it; the cases below each break one thing.
json valid_schedule() {
  const Run write = tessera("schedule --algo ring --gpus 4 --seq 4K --pass forward --mask full -o bad_files_valid.json");
  REQUIRE(write.exit_code == 0);
  return json::parse(cli_test::slurp(scratch_path("bad_files_valid.json")));
}

// The index of the first op of `kind` ("compute", "send") in a schedule document.
size_t first_op(const json& document, const std::string& kind) {
  for (size_t index = 0; index < document.at("ops").size(); ++index)
    if (document["ops"][index].at("op") == kind) return index;
  FAIL("no " << kind << " op in the schedule");
  return 0;
}

std::string op_path(size_t index) { return "ops[" + std::to_string(index) + "]"; }

// `check FILE` on `document`.
Run check_schedule(const std::string& name, const json& document) {
  write_file(name, document.dump(1));
  return tessera("check " + name);
}

}  // namespace

TEST_CASE("a valid schedule file still checks, by `check` and by --algo file", "[cli][bad-files]") {
  const json document = valid_schedule();
  const Run check = check_schedule("bad_files_ok.json", document);
  INFO(check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("bad_files_ok.json: valid") != std::string::npos);
  const Run cost = tessera("cost --algo file --input bad_files_ok.json");
  CHECK(cost.exit_code == 0);
}

TEST_CASE("schedule files that are not JSON name the file and the line:column", "[cli][bad-files]") {
  const std::string valid_text = valid_schedule().dump(1);
  write_file("bad_files_syntax.json", "{\n \"format\": \"tessera-schedule\",\n \"version\": ]\n}");
  require_refused(tessera("check bad_files_syntax.json"), {"bad_files_syntax.json:3:", "not valid JSON"});
  write_file("bad_files_empty.json", "");
  require_refused(tessera("check bad_files_empty.json"), {"bad_files_empty.json:1:1: not valid JSON"});
  write_file("bad_files_truncated.json", valid_text.substr(0, valid_text.size() / 2));
  require_refused(tessera("check bad_files_truncated.json"), {"bad_files_truncated.json:", "not valid JSON"});
  // JSON has no NaN or Infinity; they are syntax errors, with their place.
  write_file("bad_files_nan.json", "{\"format\": \"tessera-schedule\", \"version\": NaN}");
  require_refused(tessera("check bad_files_nan.json"), {"bad_files_nan.json:1:", "not valid JSON"});
  // A string that is not UTF-8.
  write_file("bad_files_utf8.json", "{\"format\": \"tessera-\xff\xfe\"}");
  require_refused(tessera("check bad_files_utf8.json"), {"bad_files_utf8.json:1:", "not valid JSON"});
  // 1e999 overflows a double: refused, never an internal error.
  write_file("bad_files_overflow.json", "{\"format\": \"tessera-schedule\", \"version\": 1e999}");
  require_refused(tessera("check bad_files_overflow.json"), {"bad_files_overflow.json", "1e999"});
  // A directory, and a file that is not there.
  std::filesystem::create_directories(scratch_path("bad_files_folder.json"));
  require_refused(tessera("check bad_files_folder.json"), {"bad_files_folder.json", "directory"});
  require_refused(tessera("check bad_files_absent.json"), {"bad_files_absent.json", "cannot open"});
  // The same reader serves --algo file.
  require_refused(tessera("cost --algo file --input bad_files_empty.json"),
                  {"bad_files_empty.json:1:1: not valid JSON"});
}

TEST_CASE("schedule files with fields of the wrong type name the field", "[cli][bad-files]") {
  const json valid = valid_schedule();
  const size_t compute = first_op(valid, "compute"), send = first_op(valid, "send");
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
    std::vector<std::string> named;
  };
  const std::vector<Case> cases = {
      {"gpus as a string", [](json& d) { d["gpus"] = "4"; }, {"gpus: expected an integer", "got string"}},
      {"a peer as a string", [&](json& d) { d["ops"][send]["peer"] = "1"; },
       {op_path(send) + ".peer: expected an integer"}},
      {"an array for the problem", [](json& d) { d["problem"] = json::array(); }, {"problem: expected a JSON object"}},
      {"an array for an op", [](json& d) { d["ops"][0] = json::array({1, 2}); }, {"ops[0]: expected a JSON object"}},
      {"an object for the streams", [](json& d) { d["streams"] = json::object(); }, {"streams: expected"}},
      {"a number for a stream name", [](json& d) { d["streams"][0] = 7; }, {"streams[0]: expected a string"}},
      {"a string for the ops", [](json& d) { d["ops"] = "all of them"; }, {"ops: expected an array"}},
      {"an item that is not a triple", [&](json& d) { d["ops"][send]["items"][0] = json::object(); },
       {op_path(send) + ".items[0]: expected [kind, head_group, chunk]"}},
      {"a block that is a number", [&](json& d) { d["ops"][compute]["blocks"][0] = 3; },
       {op_path(compute) + ".blocks[0]: expected [head_group, q_chunk, kv_chunk]"}},
      {"null for the tile", [](json& d) { d["tile"] = nullptr; }, {"tile: expected a string, got null"}},
      {"a mask that is a string", [](json& d) { d["problem"]["mask"] = "full"; },
       {"problem.mask: expected a JSON object"}},
      {"the whole file an array", [](json& d) { d = json::array({d}); }, {"schedule: expected a JSON object"}},
  };
  for (const Case& test : cases) {
    INFO(test.name);
    json document = valid;
    test.mutate(document);
    std::vector<std::string> named = test.named;
    named.push_back("bad_files_types.json: ");
    require_refused(check_schedule("bad_files_types.json", document), named);
  }
}

TEST_CASE("schedule files with missing fields or counts out of range name the field", "[cli][bad-files]") {
  const json valid = valid_schedule();
  const size_t send = first_op(valid, "send");
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
    std::vector<std::string> named;
  };
  const std::vector<Case> cases = {
      {"no ops", [](json& d) { d.erase("ops"); }, {"schedule: missing field 'ops'"}},
      {"an op without its GPU", [](json& d) { d["ops"][2].erase("gpu"); }, {"ops[2]: missing field 'gpu'"}},
      {"a problem without heads", [](json& d) { d["problem"].erase("heads"); }, {"problem: missing field 'heads'"}},
      {"zero GPUs", [](json& d) { d["gpus"] = 0; }, {"gpus: 0 is out of range [1, "}},
      {"negative GPUs", [](json& d) { d["gpus"] = -3; }, {"gpus: -3 is out of range"}},
      {"1e30 GPUs", [](json& d) { d["gpus"] = 1e30; }, {"gpus: expected an integer", "1e+30"}},
      {"GPUs past 64 bits", [](json& d) { d["gpus"] = 18446744073709551615ull; },
       {"gpus: 18446744073709551615 is out of range"}},
      {"1e30 tokens", [](json& d) { d["problem"]["seq_len"] = 1e30; }, {"problem.seq_len: expected an integer"}},
      {"tokens past 2^31", [](json& d) { d["problem"]["seq_len"] = int64_t{1} << 40; },
       {"problem.seq_len: 1099511627776 is out of range [1, 2147483648]"}},
      {"a batch of zero", [](json& d) { d["problem"]["batch"] = 0; }, {"problem.batch: 0 is out of range"}},
      {"a fractional batch", [](json& d) { d["problem"]["batch"] = 1.5; }, {"problem.batch: expected an integer"}},
      {"a tensor past 64 bits",
       [](json& d) {
         d["problem"]["batch"] = int64_t{1} << 40;
         d["problem"]["seq_len"] = int64_t{1} << 31;
       },
       {"problem: batch x seq_len x heads", "too large"}},
      {"zero head groups", [](json& d) { d["head_groups"] = 0; }, {"head_groups: 0 is out of range"}},
      {"a negative stream buffer", [](json& d) { d["stream_buffers"][0] = -1; }, {"stream_buffers[0]: -1 is out of range"}},
      {"an op on GPU 4 of 4", [](json& d) { d["ops"][0]["gpu"] = 4; }, {"ops[0].gpu: 4 is out of range [0, 3]"}},
      {"a peer that does not exist", [&](json& d) { d["ops"][send]["peer"] = 99; },
       {op_path(send) + ".peer: 99 is out of range [0, 3]"}},
      {"a stream that does not exist", [](json& d) { d["ops"][0]["stream"] = 1000; }, {"ops[0].stream: 1000 is out of range"}},
      {"a chunk past the GPUs", [&](json& d) { d["ops"][send]["items"][0][2] = 4; },
       {op_path(send) + ".items[0][2]: 4 is out of range [0, 3]"}},
      {"a send of no items", [&](json& d) { d["ops"][send]["items"] = json::array(); },
       {op_path(send) + ".items: expected a non-empty array of items, got an empty array"}},
      {"a collective op without collectives", [](json& d) { d["ops"][0] = {{"op", "collective"}, {"gpu", 0}, {"stream", 0}, {"pass", "forward"}, {"collective", 0}}; },
       {"ops[0].collective: the schedule has no collectives"}},
      {"document lengths past 64 bits",
       [](json& d) {
         d["problem"]["mask"] = {{"kind", "documents"}, {"document_lengths", {INT64_MAX, 1}}};
       },
       {"problem.mask.document_lengths[0]: 9223372036854775807 is out of range [1, 4096]"}},
      {"more documents than tokens",
       [](json& d) {
         d["problem"]["seq_len"] = 8;
         d["gpus"] = 4;
         d["problem"]["mask"] = {{"kind", "documents"}, {"document_lengths", std::vector<int>(9, 1)}};
       },
       {"problem.mask.document_lengths: 9 documents but only 8 tokens"}},
  };
  for (const Case& test : cases) {
    INFO(test.name);
    json document = valid;
    test.mutate(document);
    std::vector<std::string> named = test.named;
    named.push_back("bad_files_range.json: ");
    require_refused(check_schedule("bad_files_range.json", document), named);
  }
}

TEST_CASE("a long bad token in a schedule file is cut in the message", "[cli][bad-files]") {
  json document = valid_schedule();
  document["ops"][0]["op"] = std::string(200000, 'x');
  const Run run = check_schedule("bad_files_long_token.json", document);
  require_refused(run, {"bad_files_long_token.json: ops[0].op: unknown operation 'xxx"});
}

TEST_CASE("schedule files too large for the memory limit are refused with the estimate", "[cli][bad-files][memory]") {
  const ScopedEnvironment limit("TESSERA_MEMORY_LIMIT", "1GB");
  // A few bytes that claim 2^20 GPUs: checking it would take terabytes.
  json document = valid_schedule();
  document["gpus"] = 1 << 20;
  document["problem"]["seq_len"] = int64_t{1} << 31;
  require_refused(check_schedule("bad_files_many_gpus.json", document),
                  {"bad_files_many_gpus.json: gpus: checking a schedule of 1048576 GPUs", "needs about", "limit"});
  // A file whose text alone, parsed, would pass the limit.
  const ScopedEnvironment small("TESSERA_MEMORY_LIMIT", "1MB");
  write_file("bad_files_huge.json", "[" + std::string(200000, ' ') + "]");
  require_refused(tessera("check bad_files_huge.json"), {"bad_files_huge.json", "needs about", "limit"});
}

TEST_CASE("assignment files: every kind of bad file names the file and the entry", "[cli][bad-files][assignment]") {
  const std::string cost = "cost --algo assignment --gpus 2 --seq 64 --mask full --pass forward --input ";
  write_file("bad_files_assignment_ok.json", R"({"gpus": 2, "assignment": [[0, 1], [1, 0]]})");
  const Run ok = tessera(cost + "bad_files_assignment_ok.json");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  struct Case {
    const char* text;
    std::vector<std::string> named;
  };
  const std::vector<Case> cases = {
      {"", {"bad_files_assignment.json:1:1: not valid JSON"}},
      {R"({"gpus": 2, "assignment": [[0, 1], [1, 0])", {"bad_files_assignment.json:1:", "not valid JSON"}},
      {R"({"gpus": 2, "assignment": [[0, 1], [1, 1e999]]})", {"bad_files_assignment.json", "1e999"}},
      {R"([[0, 1], [1, 0]])", {"bad_files_assignment.json: expected an object"}},
      {R"({"assignment": [[0, 1], [1, 0]]})", {"bad_files_assignment.json: gpus: missing"}},
      {R"({"gpus": "2", "assignment": [[0, 1], [1, 0]]})", {"bad_files_assignment.json: gpus: expected a whole number"}},
      {R"({"gpus": 1e30, "assignment": []})", {"bad_files_assignment.json: gpus: expected a whole number"}},
      {R"({"gpus": 3, "assignment": []})", {"bad_files_assignment.json: gpus: the file is for 3 GPUs but --gpus is 2"}},
      {R"({"gpus": 2, "assignment": {"0": [0, 1]}})", {"bad_files_assignment.json: assignment: expected a JSON array"}},
      {R"({"gpus": 2, "assignment": [[0, 1]]})", {"bad_files_assignment.json: assignment: expected 2 rows"}},
      {R"({"gpus": 2, "assignment": [[0, 1], 5]})", {"bad_files_assignment.json: assignment[1]: expected a JSON array"}},
      {R"({"gpus": 2, "assignment": [[0, 1], [1]]})", {"bad_files_assignment.json: assignment[1]: expected 2 entries"}},
      {R"({"gpus": 2, "assignment": [[0, "1"], [1, 0]]})",
       {"bad_files_assignment.json: assignment[0][1]: expected a GPU index", "got string"}},
      {R"({"gpus": 2, "assignment": [[0, 1.5], [1, 0]]})", {"bad_files_assignment.json: assignment[0][1]: expected a GPU index"}},
      {R"({"gpus": 2, "assignment": [[0, 1], [1, 7]]})", {"bad_files_assignment.json: assignment[1][1]: GPU 7 does not exist"}},
      {R"({"gpus": 2, "assignment": [[0, -1], [1, 0]]})", {"bad_files_assignment.json: assignment[0][1]: GPU -1 does not exist"}},
      {R"({"gpus": 2, "assignment": [[0, 18446744073709551615], [1, 0]]})",
       {"bad_files_assignment.json: assignment[0][1]: GPU 18446744073709551615 does not exist"}},
  };
  for (const Case& test : cases) {
    INFO(test.text);
    write_file("bad_files_assignment.json", test.text);
    require_refused(tessera(cost + "bad_files_assignment.json"), test.named);
  }
  std::filesystem::create_directories(scratch_path("bad_files_assignment_folder"));
  require_refused(tessera(cost + "bad_files_assignment_folder"), {"bad_files_assignment_folder", "directory"});
}

TEST_CASE("an assignment for more GPUs than memory allows is refused before it is built", "[cli][bad-files][memory]") {
  // 64 x 64 entries: a few kilobytes of text, but the schedule from it takes megabytes (the
  // reader estimates 64^2 x 256 bytes = 1 MB; the generator's own estimate may come first).
  std::string text = R"({"gpus": 64, "assignment": [)";
  for (int i = 0; i < 64; ++i) {
    text += i ? ", [" : "[";
    for (int j = 0; j < 64; ++j) text += (j ? ", " : "") + std::to_string(i);
    text += "]";
  }
  write_file("bad_files_assignment_64.json", text + "]}");
  const std::string command =
      "cost --algo assignment --gpus 64 --seq 4K --mask full --pass forward --input bad_files_assignment_64.json";
  {
    const ScopedEnvironment limit("TESSERA_MEMORY_LIMIT", "600kB");
    require_refused(tessera(command), {"64", "needs about", "more than the limit of 600 kB"});
  }
  const Run fits = tessera(command);  // the machine's own limit: it fits
  INFO(fits.err);
  CHECK(fits.exit_code == 0);
}

TEST_CASE("calibration files: every kind of bad file names the file and the field", "[cli][bad-files][calibration]") {
  const std::string simulate = "simulate --algo ring --gpus 4 --seq 4K --calibration ";
  struct Case {
    const char* text;
    std::vector<std::string> named;
  };
  const std::vector<Case> cases = {
      {"", {"bad_files_cal.json:1:1: not valid JSON"}},
      {"{\"gpu\": \"h100\",\n \"max_efficiency\": }", {"bad_files_cal.json:2:", "not valid JSON"}},
      {R"({"peak_flops_per_s_16bit": 1e999})", {"bad_files_cal.json", "1e999"}},
      {R"([1, 2])", {"bad_files_cal.json: expected a JSON object, got array"}},
      {R"({"gpu": 5})", {"bad_files_cal.json: gpu: expected the name of a GPU profile", "got number"}},
      {R"({"gpu": "tpu-v9"})", {"bad_files_cal.json: gpu: unknown GPU profile 'tpu-v9'"}},
      {R"({"device": ["cuda"]})", {"bad_files_cal.json: device: expected a string"}},
      {R"({"max_efficency": 0.5})", {"bad_files_cal.json: max_efficency: unknown field"}},
      {R"({"peak_flops_per_s_16bit": "fast"})", {"bad_files_cal.json: peak_flops_per_s_16bit: expected a number"}},
      // Tiny figures once stalled the simulation; huge ones are no measurement either.
      {R"({"peak_flops_per_s_16bit": 1e-300})", {"bad_files_cal.json: peak_flops_per_s_16bit: expected a number from 1e+06"}},
      {R"({"peak_flops_per_s_fp32": 1e30})", {"bad_files_cal.json: peak_flops_per_s_fp32: expected a number from"}},
      {R"({"max_efficiency": 1e-9})", {"bad_files_cal.json: max_efficiency: expected a number from 0.001 to 1"}},
      {R"({"max_efficiency": 1.5})", {"bad_files_cal.json: max_efficiency: expected a number from 0.001 to 1"}},
      {R"({"half_efficiency_tokens": 0})", {"bad_files_cal.json: half_efficiency_tokens: expected a number from 0 (exclusive)"}},
      {R"({"half_efficiency_tokens": 1e300})", {"bad_files_cal.json: half_efficiency_tokens"}},
      {R"({"hbm_bytes_per_s": -1})", {"bad_files_cal.json: hbm_bytes_per_s"}},
      {R"({"launch_overhead_s": 5})", {"bad_files_cal.json: launch_overhead_s: expected a number from 0 to 1"}},
      {R"({"backward_rate_ratio": 1e-9})", {"bad_files_cal.json: backward_rate_ratio"}},
      {R"({"message": [1]})", {"bad_files_cal.json: message: expected a JSON object, got array"}},
      {R"({"message": {"overhead_s": -1}})", {"bad_files_cal.json: message.overhead_s: expected a number from 0 to 1"}},
      {R"({"message": {"overhead_s": "1us"}})", {"bad_files_cal.json: message.overhead_s: expected a number"}},
      {R"({"message": {"latency_s": 1e-6}})", {"bad_files_cal.json: message.latency_s: unknown field"}},
      {R"({"link": 3})", {"bad_files_cal.json: link: expected a JSON object"}},
      {R"({"link": {"bytes_per_s": 1e9}})", {"bad_files_cal.json: link.latency_s: missing"}},
      {R"({"link": {"bytes_per_s": 0.5, "latency_s": 0}})", {"bad_files_cal.json: link.bytes_per_s: expected a number from"}},
      {R"({"link": {"bytes_per_s": 1e9, "latency_s": 1e9}})", {"bad_files_cal.json: link.latency_s"}},
  };
  for (const Case& test : cases) {
    INFO(test.text);
    write_file("bad_files_cal.json", test.text);
    require_refused(tessera(simulate + "bad_files_cal.json"), test.named);
  }
  std::filesystem::create_directories(scratch_path("bad_files_cal_folder"));
  require_refused(tessera(simulate + "bad_files_cal_folder"), {"bad_files_cal_folder", "directory"});
  // `validate` reads the same file through the same reader.
  write_file("bad_files_cal.json", R"({"gpu": 5})");
  require_refused(tessera("validate --algo ring --gpus 2 --seq 256 --backend cpu --calibration bad_files_cal.json"),
                  {"bad_files_cal.json: gpu: expected the name of a GPU profile"});
}

TEST_CASE("a calibration file at the edges of its ranges simulates to a finite time", "[cli][bad-files][calibration]") {
  // The slowest GPU the ranges allow: 1e6 FLOP/s at efficiency 1e-3, half efficiency at 1e6
  // tokens. Slow, but a figure, not a stalled simulation.
  write_file("bad_files_cal_edge.json",
             R"({"peak_flops_per_s_16bit": 1e6, "max_efficiency": 1e-3, "half_efficiency_tokens": 1e6,
                 "launch_overhead_s": 0.99, "backward_rate_ratio": 1e-3, "hbm_bytes_per_s": 1e6,
                 "message": {"overhead_s": 0, "nvlink_latency_s": 1, "network_latency_s": 1},
                 "measured": {"anything": [1, "two"]}})");
  const Run run = tessera("simulate --algo ring --gpus 4 --seq 4K --pass both --calibration bad_files_cal_edge.json --json");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const double makespan_s = json::parse(run.out).at("makespan_s").get<double>();
  CHECK(std::isfinite(makespan_s));
  CHECK(makespan_s > 1);
}

TEST_CASE("YAML files: numbers that are not finite or out of range, and text that is not UTF-8", "[cli][bad-files][yaml]") {
  struct Case {
    std::string text;
    std::vector<std::string> named;
  };
  const std::string ring = "builder: ring\n";
  const std::vector<Case> cases = {
      {ring + "gpus: 4\nbandwidth: 400Gb/s\nlatency_us: .inf\n", {"bad_files_topo.yaml:4: latency_us: expected a finite number, got '.inf'"}},
      {ring + "gpus: 4\nbandwidth: 400Gb/s\nlatency_us: .nan\n", {"bad_files_topo.yaml:4: latency_us: expected a finite number"}},
      {ring + "gpus: 4\nbandwidth: 400Gb/s\nlatency_us: 1e999\n", {"bad_files_topo.yaml:4: latency_us: expected a finite number, got '1e999'"}},
      {ring + "gpus: 99999999999999999999\nbandwidth: 400Gb/s\nlatency_us: 1\n",
       {"bad_files_topo.yaml:2: gpus: '99999999999999999999' is out of range (expected 1 to"}},
      {ring + "gpus: 4294967297\nbandwidth: 400Gb/s\nlatency_us: 1\n", {"bad_files_topo.yaml:2: gpus: 4294967297 is out of range"}},
      {ring + "gpus: 1e30\nbandwidth: 400Gb/s\nlatency_us: 1\n", {"bad_files_topo.yaml:2: gpus: expected a whole number, got '1e30'"}},
      {ring + "gpus: [4]\nbandwidth: 400Gb/s\nlatency_us: 1\n", {"bad_files_topo.yaml:2: gpus: expected a whole number, got a list"}},
      {"name: ring-\xff\xfe\n" + ring + "gpus: 4\nbandwidth: 400Gb/s\nlatency_us: 1\n",
       {"bad_files_topo.yaml:1: name: not valid UTF-8 text"}},
  };
  for (const Case& test : cases) {
    INFO(test.text);
    write_file("bad_files_topo.yaml", test.text);
    require_refused(tessera("topo check bad_files_topo.yaml"), test.named);
  }
}
