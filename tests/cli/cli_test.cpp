// End-to-end tests of the `tessera` command line: exit codes, one-line errors, JSON keys, and
// figures that follow from closed forms.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"
#include "common/scratch.hpp"

using test_support::scratch_path;

using cli_test::lines;
using cli_test::Run;
using cli_test::slurp;
using cli_test::tessera;

TEST_CASE("tessera schedules lists every generator", "[cli]") {
  Run run = tessera("schedules");
  REQUIRE(run.exit_code == 0);
  for (const char* name : {"ring", "all-gather", "ulysses", "usp", "attention2d", "mesh", "assignment", "file"})
    CHECK(run.out.find(name) != std::string::npos);
}

TEST_CASE("tessera cost --json carries the documented keys and the ring volume", "[cli]") {
  Run run = tessera("cost --algo ring --gpus 8 --seq 64K --heads 32 --kv-heads 32 --mask full --pass forward --json");
  REQUIRE(run.exit_code == 0);
  auto json = nlohmann::json::parse(run.out);
  for (const char* key : {"recv_bytes_max", "recv_bytes_by_kind", "flops_max", "peak_memory_bytes_max", "time_s"})
    CHECK(json.contains(key));
  // 7 KV chunks of 8K tokens x 32 heads x (128 + 128) x 2 bytes.
  CHECK(json["recv_bytes_max"].get<double>() == Approx(7.0 * 8192 * 32 * 256 * 2));
  CHECK(json["recv_bytes_by_kind"]["KV"].get<double>() == Approx(7.0 * 8192 * 32 * 256 * 2));
  CHECK(json["recv_bytes_by_kind"]["Q"].get<double>() == 0);
  // Every GPU does 1/8 of 4 N^2 d H.
  CHECK(json["flops_max"].get<double>() == Approx(4.0 * 65536.0 * 65536 * 128 * 32 / 8));
}

TEST_CASE("tessera plan ranks schedules by time", "[cli]") {
  Run run = tessera("plan --gpus 16 --seq 64K --json --top 4");
  REQUIRE(run.exit_code == 0);
  auto json = nlohmann::json::parse(run.out);
  REQUIRE(json["ranking"].size() == 4);
  // The default model ranks by simulated time (the analytic time_s may order differently).
  for (size_t index = 1; index < json["ranking"].size(); ++index)
    CHECK(json["ranking"][index - 1]["simulated_s"].get<double>() <= json["ranking"][index]["simulated_s"].get<double>());
  Run analytic = tessera("plan --gpus 16 --seq 64K --json --top 4 --model analytic");
  REQUIRE(analytic.exit_code == 0);
  auto ranked = nlohmann::json::parse(analytic.out)["ranking"];
  for (size_t index = 1; index < ranked.size(); ++index)
    CHECK(ranked[index - 1]["time_s"].get<double>() <= ranked[index]["time_s"].get<double>());
}

TEST_CASE("tessera plan never prints a ratio below its bounds", "[cli][bound]") {
  // Head-splitting schedules (usp) are among the candidates: the bound must hold for them too.
  for (const char* flags : {"--gpus 16 --seq 64K", "--gpus 16 --seq 64K --topology h100-ib:2 --kv-heads 32",
                            "--gpus 8 --seq 32K --mask full --pass forward --model analytic"}) {
    Run run = tessera(std::string("plan --json --exhaustive ") + flags);  // every candidate priced
    INFO(flags);
    REQUIRE(run.exit_code == 0);
    auto ranking = nlohmann::json::parse(run.out)["ranking"];
    REQUIRE(ranking.size() > 10);
    for (const auto& entry : ranking) {
      INFO(entry["schedule"]);
      CHECK(entry["lower_bound_ratio"].get<double>() >= 1.0);
      CHECK(entry["time_over_lower_bound"].get<double>() >= 1.0);
      if (entry.contains("simulated_over_lower_bound")) CHECK(entry["simulated_over_lower_bound"].get<double>() >= 1.0);
    }
  }
}

TEST_CASE("tessera plan with no arguments runs the built-in Llama-3-8B-like scenario", "[cli]") {
  Run run = tessera("plan --json --top 1");
  REQUIRE(run.exit_code == 0);
  auto json = nlohmann::json::parse(run.out);
  CHECK(json["gpus"] == 256);
  CHECK(json["problem"]["seq_len"] == 1 << 20);
  CHECK(json["problem"]["heads"] == 32);
  CHECK(json["problem"]["kv_heads"] == 8);
  CHECK(json["problem"]["head_dim"] == 128);
  CHECK(json["problem"]["dtype"] == "bf16");
  CHECK(json["problem"]["mask"]["kind"] == "causal");
  CHECK(json["ranking"].size() == 1);
}

TEST_CASE("a schedule written by tessera schedule passes tessera check", "[cli]") {
  Run write = tessera("schedule --algo mesh --tile 2x4 --gpus 8 --seq 4K -o cli_test_mesh.json");
  REQUIRE(write.exit_code == 0);
  Run check = tessera("check cli_test_mesh.json");
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("valid") != std::string::npos);
}

TEST_CASE("an invalid schedule file is reported with exit code 1", "[cli]") {
  Run write = tessera("schedule --algo ring --gpus 4 --seq 4K --pass forward --mask full");
  REQUIRE(write.exit_code == 0);
  auto json = nlohmann::json::parse(write.out);
  // Drop the first compute op: its block is then never computed.
  auto& ops = json["ops"];
  for (size_t index = 0; index < ops.size(); ++index)
    if (ops[index]["op"] == "compute") {
      ops.erase(index);
      break;
    }
  std::ofstream(scratch_path("cli_test_broken.json")) << json.dump();
  Run check = tessera("check cli_test_broken.json");
  CHECK(check.exit_code == 1);
  CHECK(check.out.find("never computed") != std::string::npos);
}

TEST_CASE("bad input gives one clear line and exit code 2", "[cli]") {
  std::ofstream(scratch_path("cli_test_malformed.json")) << "{\"format\": \"tessera-schedule\", ";
  const char* cases[][2] = {
      {"cost --algo ring --no-such-flag", "no-such-flag"},
      {"cost --algo mesh --gpus 12 --tile 5x2", "a x b must equal"},
      {"cost --algo ulysses --gpus 64 --heads 32", "ulysses"},
      {"cost --algo ring --gpus 64 --seq 32", "smaller than"},
      {"check cli_test_malformed.json", "not valid JSON"},
      {"check cli_test_no_such_file.json", "cannot open"},
      {"cost --algo ring --seq 12Q", "--seq"},
      {"cost --algo warp-drive", "unknown algorithm"},
      {"cost --algo mesh --tile banana", "--tile"},
      {"plan --mask documents --documents 1K,2K --seq 4K", "sum to"},
      {"nonsense", "nonsense"},
  };
  for (const auto& entry : cases) {
    Run run = tessera(entry[0]);
    INFO("tessera " << entry[0] << " -> " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(lines(run.err) == 1);
    CHECK(run.err.find(entry[1]) != std::string::npos);
  }
}

TEST_CASE("tessera topo lists presets and shows one as JSON", "[cli][topo]") {
  Run list = tessera("topo list");
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("h100-ib") != std::string::npos);
  Run show = tessera("topo show torus-4x4 --json");
  REQUIRE(show.exit_code == 0);
  auto json = nlohmann::json::parse(show.out);
  for (const char* key : {"gpus", "switches", "links", "diameter_hops", "bisection_bytes_per_s"}) CHECK(json.contains(key));
  CHECK(json["gpus"] == 16);
  CHECK(json["diameter_hops"] == 4);  // 2 + 2 on a 4 x 4 torus
  Run dot = tessera("topo dot ring-4");
  CHECK(dot.exit_code == 0);
  CHECK(dot.out.find("digraph") != std::string::npos);
}

TEST_CASE("bad topology files exit with code 2 and name the line", "[cli][topo]") {
  std::ofstream(scratch_path("cli_test_bad_topology.yaml")) << "builder: ring\ngpus: 4\nbandwidth_gbps: -5\nlatency_us: 1\n";
  Run run = tessera("topo check cli_test_bad_topology.yaml");
  CHECK(run.exit_code == 2);
  CHECK(lines(run.err) == 1);
  CHECK(run.err.find("cli_test_bad_topology.yaml:") != std::string::npos);
}

TEST_CASE("bandwidths carry their unit; the GB/s flags still work with one note", "[cli][units]") {
  const std::string cost = "cost --algo ring --gpus 8 --seq 64K --json ";
  // 400 Gb/s = 50 GB/s, the default: the same numbers to the last digit, however written.
  const Run plain = tessera(cost);
  REQUIRE(plain.exit_code == 0);
  for (const char* flags :
       {"--bandwidth 400Gb/s --hbm-bandwidth 3.35TB/s", "--bandwidth 50GB/s --hbm-bandwidth 3350GB/s"}) {
    const Run run = tessera(cost + flags);
    INFO(flags << ": " << run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out == plain.out);
    CHECK(run.err.empty());
  }
  const Run old = tessera(cost + "--bandwidth-gbps 50 --hbm-gbps 3350");
  CHECK(old.exit_code == 0);
  CHECK(old.out == plain.out);
  CHECK(lines(old.err) == 2);  // one note per deprecated flag
  CHECK(old.err.find("tessera: note: --bandwidth-gbps is deprecated") != std::string::npos);
  CHECK(old.err.find("write --bandwidth 50GB/s (or 400Gb/s in bits)") != std::string::npos);
  // A slower link: 100 Gb/s is 12.5 GB/s either way, and the ring takes longer.
  const Run slow = tessera(cost + "--bandwidth 100Gb/s");
  const Run slow_old = tessera(cost + "--bandwidth-gbps 12.5");
  REQUIRE(slow.exit_code == 0);
  CHECK(slow.out == slow_old.out);
  CHECK(nlohmann::json::parse(slow.out)["time_s"].get<double>() >
        nlohmann::json::parse(plain.out)["time_s"].get<double>());

  for (const char* flags :
       {"--bandwidth 50", "--bandwidth 50GiB/s", "--hbm-bandwidth fast", "--bandwidth 50GB/s --bandwidth-gbps 50"}) {
    const Run run = tessera(cost + flags);
    INFO(flags << " -> " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(lines(run.err) == 1);
    CHECK(run.err.find("bandwidth") != std::string::npos);
  }
}

TEST_CASE("topology bandwidths carry their unit; the GB/s keys print a note naming the line", "[cli][topo][units]") {
  const std::string ring = "builder: ring\ngpus: 4\nlatency_us: 1\n";
  std::ofstream(scratch_path("cli_test_units_new.yaml")) << ring << "bandwidth: 400Gb/s\n";
  std::ofstream(scratch_path("cli_test_units_old.yaml")) << ring << "bandwidth_gbps: 50\n";
  const Run spelled = tessera("topo show cli_test_units_new.yaml --json");
  const Run old = tessera("topo show cli_test_units_old.yaml --json");
  REQUIRE(spelled.exit_code == 0);
  REQUIRE(old.exit_code == 0);
  CHECK(spelled.err.empty());
  CHECK(lines(old.err) == 1);
  CHECK(old.err.find("cli_test_units_old.yaml:4: bandwidth_gbps is deprecated") != std::string::npos);
  auto figures = [](const std::string& text) {  // all but the file's name
    auto json = nlohmann::json::parse(text);
    json.erase("name");
    json.erase("source");
    return json;
  };
  CHECK(figures(spelled.out) == figures(old.out));
  // A 4-GPU bidirectional ring cut in half crosses 2 links of 400 Gb/s = 50e9 B/s each way.
  CHECK(figures(spelled.out)["bisection_bytes_per_s"].get<double>() == 2 * 50e9);
}

TEST_CASE("tessera cost on a topology reports link figures", "[cli][topo]") {
  Run run = tessera("cost --algo mesh --tile 4x4 --gpus 16 --seq 64K --topology h100-ib:2 --json");
  REQUIRE(run.exit_code == 0);
  auto json = nlohmann::json::parse(run.out);
  REQUIRE(json.contains("network"));
  CHECK(json["network"]["busiest_link_bytes"].get<double>() > 0);
}

TEST_CASE("tessera simulate runs a schedule and a standalone collective", "[cli][sim]") {
  Run run = tessera("simulate --algo ring --gpus 8 --seq 64K --trace cli_test_trace.json --json");
  REQUIRE(run.exit_code == 0);
  auto json = nlohmann::json::parse(run.out);
  CHECK(json["makespan_s"].get<double>() > 0);
  auto trace = nlohmann::json::parse(slurp(scratch_path("cli_test_trace.json")));
  CHECK(trace["traceEvents"].is_array());
  // Ring all-reduce of 1 GB on 8 ranks of a unidirectional ring: 2 (7/8) S / B, B = 50 GB/s.
  Run collective = tessera("simulate --collective all-reduce --size 1G --gpus 8 --topology ring-8 --json");
  REQUIRE(collective.exit_code == 0);
  auto result = nlohmann::json::parse(collective.out);
  for (const char* key : {"makespan_s", "algbw_bytes_per_s", "busbw_bytes_per_s"}) CHECK(result.contains(key));
  CHECK(tessera("simulate --gpus 8").exit_code == 2);  // neither --algo nor --collective
  CHECK(tessera("simulate --algo ring --fidelity psychic").exit_code == 2);
}

TEST_CASE("a deadlocking schedule file is reported, not simulated", "[cli][sim]") {
  // Two GPUs, each first waits to receive the other's KV and only then sends its own, on one
  // stream: under rendezvous neither recv can ever complete.
  nlohmann::json schedule = {
      {"format", "tessera-schedule"}, {"version", 1}, {"algorithm", "hand"}, {"variant", ""},
      {"problem", {{"batch", 1}, {"seq_len", 64}, {"heads", 1}, {"kv_heads", 1}, {"head_dim", 8}, {"head_dim_v", 8},
                   {"dtype", "bf16"}, {"mask", {{"kind", "full"}}}, {"pass", "forward"}}},
      {"layout", "contiguous"}, {"gpus", 2}, {"head_groups", 1}, {"streams", {"compute", "comm"}},
      {"collectives", nlohmann::json::array()},
      {"ops", nlohmann::json::array()}};
  for (int gpu = 0; gpu < 2; ++gpu) {
    int other = 1 - gpu;
    schedule["ops"].push_back({{"gpu", gpu}, {"stream", 1}, {"op", "recv"}, {"pass", "forward"}, {"peer", other},
                               {"items", {{"KV", 0, other}}}});
    schedule["ops"].push_back({{"gpu", gpu}, {"stream", 1}, {"op", "send"}, {"pass", "forward"}, {"peer", other},
                               {"items", {{"KV", 0, gpu}}}});
    for (int kv : {gpu, other})
      schedule["ops"].push_back({{"gpu", gpu}, {"stream", 0}, {"op", "compute"}, {"pass", "forward"},
                                 {"blocks", {{0, gpu, kv}}}});
  }
  std::ofstream(scratch_path("cli_test_deadlock.json")) << schedule.dump();
  Run check = tessera("check cli_test_deadlock.json");
  CHECK(check.exit_code == 1);
  CHECK(check.out.find("deadlock") != std::string::npos);
  Run simulate = tessera("simulate --algo file --input cli_test_deadlock.json");
  CHECK(simulate.exit_code == 2);
  CHECK(lines(simulate.err) == 1);
  CHECK(simulate.err.find("deadlock") != std::string::npos);
  CHECK(simulate.err.find("waits for") != std::string::npos);
}

TEST_CASE("tessera run --backend cpu checks the numerics of ring and mesh", "[cli][backend]") {
  for (const char* algorithm : {"ring", "mesh"}) {
    Run run = tessera(std::string("run --algo ") + algorithm + " --gpus 4 --seq 203 --heads 4 --kv-heads 2 --head-dim 16 --json");
    INFO(algorithm << ": " << run.err);
    REQUIRE(run.exit_code == 0);
    auto json = nlohmann::json::parse(run.out);
    CHECK(json["passed"] == true);
    CHECK(json["errors"]["O"]["max_abs_error"].get<double>() < 1e-4);
  }
  // Without a GPU (no /dev/nvidia0), --backend cuda says so plainly and fails; with one it runs.
  if (!std::filesystem::exists("/dev/nvidia0")) {
    Run cuda = tessera("run --algo ring --gpus 4 --seq 4K --backend cuda");
    CHECK(cuda.exit_code == 1);
    INFO(cuda.err);
    CHECK((cuda.err.find("no CUDA GPU was found") != std::string::npos ||
           cuda.err.find("no CUDA executor") != std::string::npos));
    Run validate = tessera("validate --algo ring --gpus 4 --seq 4K --backend cuda");
    CHECK(validate.exit_code == 1);
  }
  Run bad_transport = tessera("run --algo ring --gpus 4 --seq 256 --backend cpu --transport carrier-pigeon");
  CHECK(bad_transport.exit_code == 2);
  CHECK(bad_transport.err.find("--transport") != std::string::npos);
}

TEST_CASE("--gpus defaults to the GPU count the topology names", "[cli][topology]") {
  // The preset's name says 16 ranks; before, the built-in 256 was refused against it.
  Run collective = tessera("simulate --collective all-reduce --topology ring-16 --size 1M --json");
  REQUIRE(collective.exit_code == 0);
  CHECK(nlohmann::json::parse(collective.out)["ranks"].get<int>() == 16);
  // A file: 4 nodes x 8 GPUs (nodes and gpus_per_node in topologies/examples/hierarchical-4x8.yaml).
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/topologies/examples/hierarchical-4x8.yaml";
  Run cost = tessera("cost --algo ring --seq 64K --pass forward --json --topology " + file);
  REQUIRE(cost.exit_code == 0);
  CHECK(nlohmann::json::parse(cost.out)["gpus"].get<int>() == 32);
  Run plan = tessera("plan --seq 32K --pass forward --model analytic --json --top 1 --topology h100-ib:2");
  REQUIRE(plan.exit_code == 0);
  CHECK(nlohmann::json::parse(plan.out)["gpus"].get<int>() == 16);  // 2 servers x 8
  Run simulate = tessera("simulate --algo ring --seq 32K --pass forward --json --per-gpu --topology torus-2x4");
  REQUIRE(simulate.exit_code == 0);
  CHECK(nlohmann::json::parse(simulate.out)["per_gpu"].size() == 8);
  // A typed --gpus still wins, and must still match the topology.
  Run mismatch = tessera("simulate --collective all-reduce --topology ring-16 --gpus 8");
  CHECK(mismatch.exit_code == 2);
  CHECK(mismatch.err.find("has 16 GPUs but the schedule has 8 ranks") != std::string::npos);
  // A preset sized by the GPU count keeps the built-in default (256 GPUs = h100-ib:32).
  Run sized = tessera("simulate --collective all-gather --topology h100-ib --size 1M --json");
  REQUIRE(sized.exit_code == 0);
  CHECK(nlohmann::json::parse(sized.out)["ranks"].get<int>() == 256);
}

TEST_CASE("tessera calibrate and validate on the CPU predict the ranks on the cores they ran on", "[cli][backend]") {
  Run calibrate = tessera("calibrate --heads 2 --kv-heads 2 --head-dim 16 --sides 16,32,64 --repeats 1 --concurrency 2 "
                          "-o cli_test_cpu_cal.json");
  INFO(calibrate.err);
  REQUIRE(calibrate.exit_code == 0);
  CHECK(calibrate.out.find("ranks sharing a device") != std::string::npos);
  CHECK(calibrate.out.find("spread") != std::string::npos);
  // The blocks' timing, its longest step, is announced before it starts (on stderr, off a terminal).
  CHECK(calibrate.err.find("timing the blocks (3 sides") != std::string::npos);
  {
    // Each group's spread in the file: the interquartile range within max - min, and the headline
    // spread the widest max - min of any group (the CPU executor has busy devices only with 2+ cores).
    std::ifstream file(scratch_path("cli_test_cpu_cal.json"));
    const auto measured = nlohmann::json::parse(file).at("measured");
    double widest = 0;
    for (const char* group : {"blocks", "merges", "busy_devices", "concurrency"}) {
      const auto& spread = measured.at("spread_by_figure").at(group);
      INFO(group);
      CHECK(spread.at("interquartile").get<double>() >= 0);
      CHECK(spread.at("interquartile").get<double>() <= spread.at("full_range").get<double>());
      widest = std::max(widest, spread.at("full_range").get<double>());
    }
    CHECK(measured.at("spread").get<double>() == widest);
    CHECK(calibrate.out.find("blocks ") != std::string::npos);
    CHECK(calibrate.out.find("concurrency ") != std::string::npos);
  }
  // Four ranks on one core, then on two: the JSON says where they ran and compares end to end.
  for (int devices : {1, 2}) {
    Run validate = tessera("validate --algo ring --gpus 4 --seq 256 --heads 2 --kv-heads 2 --head-dim 16 --devices " +
                           std::to_string(devices) + " --calibration cli_test_cpu_cal.json --json");
    INFO(validate.err);
    REQUIRE(validate.exit_code == 0);
    auto json = nlohmann::json::parse(validate.out);
    CHECK(json["ranks"] == 4);
    CHECK(json["devices"] == devices);
    CHECK(json["end_to_end"]["predicted_s"].get<double>() > 0);
    CHECK(json["end_to_end"]["measured_s"].get<double>() > 0);
    const double relative = json["end_to_end"]["relative_error"].get<double>();
    CHECK(json["end_to_end"]["abs_error"].get<double>() == Approx(std::abs(relative)));
    CHECK(json["by_kind"].contains("compute forward"));
    // The speed reference, timed before and after the run: the compute factor is the mean of
    // its times then over the calibrated model's time for its block, worked out here from the
    // file's fitted figures (a full forward block: heads x 2 side^2 pairs x 2 head_dim FLOPs,
    // plus the per-row work, at the fitted rate, plus the overhead).
    const auto& speed = json["speed_reference"];
    REQUIRE(speed["status"] == "applied");
    std::ifstream file(scratch_path("cli_test_cpu_cal.json"));
    const auto calibration = nlohmann::json::parse(file);
    REQUIRE(calibration.contains("block_model"));
    const auto& workload = calibration.at("speed_reference");
    const double side = workload.at("side_tokens").get<double>();
    const double flops = workload.at("heads").get<double>() * 2 * side * side * 2 * workload.at("head_dim").get<double>();
    const double modelled_s = flops * (1 + calibration.at("half_efficiency_tokens").get<double>() / side) /
                                  (calibration.at("peak_flops_per_s_16bit").get<double>() * calibration.at("max_efficiency").get<double>()) +
                              calibration.at("launch_overhead_s").get<double>();
    CHECK(speed["modelled_block_s"].get<double>() == Approx(modelled_s));
    CHECK(speed["compute_factor"].get<double>() ==
          Approx((speed["before"]["block_s"].get<double>() / modelled_s + speed["after"]["block_s"].get<double>() / modelled_s) / 2));
    CHECK(json["end_to_end"]["unadjusted"]["predicted_s"].get<double>() > 0);
  }
  // Turned off, the prediction is the unadjusted one of a run with it on (the same simulation).
  auto run_json = [&](const std::string& flags) {
    Run validate = tessera("validate --algo ring --gpus 4 --seq 256 --heads 2 --kv-heads 2 --head-dim 16 --devices 1 " + flags + " --json");
    INFO(validate.err);
    REQUIRE(validate.exit_code == 0);
    return nlohmann::json::parse(validate.out);
  };
  const auto on = run_json("--calibration cli_test_cpu_cal.json");
  const auto off = run_json("--calibration cli_test_cpu_cal.json --speed-reference off");
  CHECK(off["speed_reference"]["status"] == "off");
  CHECK(off["speed_reference"]["compute_factor"] == 1);
  CHECK(off["end_to_end"]["predicted_s"].get<double>() == Approx(on["end_to_end"]["unadjusted"]["predicted_s"].get<double>()));
  CHECK(off["end_to_end"]["predicted_s"].get<double>() == Approx(off["end_to_end"]["unadjusted"]["predicted_s"].get<double>()));
  // --predict-only prints that same prediction (the same ranks on the same one core) and runs
  // nothing: no measured time, no speed reference.
  const auto predicted_only = run_json("--calibration cli_test_cpu_cal.json --predict-only");
  CHECK(predicted_only["devices"] == 1);
  CHECK(predicted_only["end_to_end"]["predicted_s"].get<double>() == off["end_to_end"]["predicted_s"].get<double>());
  CHECK_FALSE(predicted_only["end_to_end"].contains("measured_s"));
  CHECK(predicted_only["by_kind"]["compute forward"]["ops"] == off["by_kind"]["compute forward"]["ops"]);
  // For CUDA's local transport, P virtual ranks on one GPU, predicted without a GPU; other
  // transports put a rank on each GPU.
  {
    Run cuda = tessera("validate --algo ring --gpus 4 --seq 256 --heads 2 --kv-heads 2 --head-dim 16 --backend cuda "
                       "--calibration cli_test_cpu_cal.json --predict-only --json");
    INFO(cuda.err);
    REQUIRE(cuda.exit_code == 0);
    const auto json = nlohmann::json::parse(cuda.out);
    CHECK(json["ranks"] == 4);
    CHECK(json["devices"] == 1);
    Run nccl = tessera("validate --algo ring --gpus 4 --seq 256 --heads 2 --kv-heads 2 --head-dim 16 --backend cuda "
                       "--transport nccl --calibration cli_test_cpu_cal.json --predict-only --json");
    INFO(nccl.err);
    REQUIRE(nccl.exit_code == 0);
    CHECK(nlohmann::json::parse(nccl.out)["devices"] == 4);
    Run text = tessera("validate --algo ring --gpus 4 --seq 256 --heads 2 --kv-heads 2 --head-dim 16 --backend cuda "
                       "--calibration cli_test_cpu_cal.json --predict-only");
    CHECK(text.exit_code == 0);
    CHECK(text.out.find("4 ranks on 1 device") != std::string::npos);
    CHECK(text.out.find("not executed") != std::string::npos);
    Run bad = tessera("validate --algo ring --gpus 4 --seq 256 --backend cuda --transport pigeon --predict-only");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--transport") != std::string::npos);
  }
  // The compute factor alone: the headline is the compute-only prediction, the devices factor
  // reported but not applied.
  const auto compute = run_json("--calibration cli_test_cpu_cal.json --speed-reference compute");
  CHECK(compute["speed_reference"]["status"] == "applied");
  CHECK(compute["speed_reference"]["devices_factor_applied"] == false);
  CHECK(compute["end_to_end"]["predicted_s"].get<double>() == Approx(compute["end_to_end"]["compute_only"]["predicted_s"].get<double>()));
  // A file from before the speed reference: validated at the calibration's speed, saying so.
  {
    std::ifstream in(test_support::scratch_path("cli_test_cpu_cal.json"));
    nlohmann::json file = nlohmann::json::parse(in);
    file.erase("speed_reference");
    std::ofstream(test_support::scratch_path("cli_test_cpu_cal_old.json")) << file.dump();
  }
  const auto old = run_json("--calibration cli_test_cpu_cal_old.json");
  CHECK(old["speed_reference"]["status"].get<std::string>().rfind("unavailable: cli_test_cpu_cal_old.json has no speed_reference", 0) == 0);
  CHECK(old["speed_reference"]["compute_factor"] == 1);
  Run text = tessera("validate --algo ring --gpus 4 --seq 256 --heads 2 --kv-heads 2 --head-dim 16 --devices 1 "
                     "--calibration cli_test_cpu_cal.json");
  CHECK(text.out.find("speed reference: a 32-token forward block took") != std::string::npos);
  CHECK(text.out.find("without the adjustment: predicted") != std::string::npos);
  // Repeated: three timed executions after a warm-up, each predicted at the speed the reference
  // had around it, and the one compared is the one of median measured / predicted.
  const auto repeated = run_json("--calibration cli_test_cpu_cal.json --repeats 3");
  const auto& executions = repeated["executions"];
  CHECK(executions["timed"] == 3);
  CHECK(executions["warm_up"] == true);
  const std::vector<double> makespans_s = executions["makespans_s"].get<std::vector<double>>();
  const std::vector<double> predicted_s = executions["predicted_s"].get<std::vector<double>>();
  REQUIRE(makespans_s.size() == 3);
  REQUIRE(predicted_s.size() == 3);
  REQUIRE(executions["compute_factors"].size() == 3);
  std::vector<double> ratios;
  for (size_t index = 0; index < 3; ++index) ratios.push_back(makespans_s[index] / predicted_s[index]);
  const auto compared = executions["compared"].get<size_t>();
  REQUIRE(compared < 3);
  std::vector<double> sorted_ratios = ratios;
  std::sort(sorted_ratios.begin(), sorted_ratios.end());
  CHECK(ratios[compared] == sorted_ratios[1]);
  CHECK(repeated["end_to_end"]["measured_s"].get<double>() == makespans_s[compared]);
  CHECK(repeated["end_to_end"]["predicted_s"].get<double>() == predicted_s[compared]);
  // The compared execution's factor is the mean of the reference timings around it, as reported.
  const auto& speed_around = repeated["speed_reference"];
  CHECK(executions["compute_factors"][compared].get<double>() == Approx(speed_around["compute_factor"].get<double>()));
  CHECK(speed_around["compute_factor"].get<double>() ==
        Approx((speed_around["compute_factor_before"].get<double>() + speed_around["compute_factor_after"].get<double>()) / 2));
  // Every reference timing is listed (before the first execution and after each), and each
  // execution's factors are the mean of the two around it.
  const auto& timings = executions["reference_timings"];
  REQUIRE(timings.size() == 4);
  for (size_t index = 0; index < 3; ++index) {
    CHECK(executions["compute_factors"][index].get<double>() ==
          Approx((timings[index]["compute_factor"].get<double>() + timings[index + 1]["compute_factor"].get<double>()) / 2));
    CHECK(executions["devices_factors"][index].get<double>() ==
          Approx((timings[index]["devices_factor"].get<double>() + timings[index + 1]["devices_factor"].get<double>()) / 2));
  }
  CHECK(timings[compared]["compute_factor"].get<double>() == Approx(speed_around["compute_factor_before"].get<double>()));
  CHECK(timings[compared + 1]["compute_factor"].get<double>() == Approx(speed_around["compute_factor_after"].get<double>()));
  // Their spread over the validation: each factor's largest over its smallest, steady within 10 %.
  double least_compute = 1e300, most_compute = 0, least_devices = 1e300, most_devices = 0;
  for (const auto& timing : timings) {
    least_compute = std::min(least_compute, timing["compute_factor"].get<double>());
    most_compute = std::max(most_compute, timing["compute_factor"].get<double>());
    least_devices = std::min(least_devices, timing["devices_factor"].get<double>());
    most_devices = std::max(most_devices, timing["devices_factor"].get<double>());
  }
  const auto& spread = executions["reference_spread"];
  CHECK(spread["compute"].get<double>() == Approx(most_compute / least_compute));
  CHECK(spread["devices"].get<double>() == Approx(most_devices / least_devices));
  CHECK(spread["tolerance"].get<double>() == 0.10);
  CHECK(spread["steady"].get<bool>() == (most_compute / least_compute <= 1.10 && most_devices / least_devices <= 1.10));
  // Without the reference, all executions share one prediction and the median time is compared.
  const auto repeated_off = run_json("--calibration cli_test_cpu_cal.json --repeats 3 --speed-reference off");
  std::vector<double> off_makespans_s = repeated_off["executions"]["makespans_s"].get<std::vector<double>>();
  REQUIRE(off_makespans_s.size() == 3);
  CHECK(repeated_off["executions"]["predicted_s"][0] == repeated_off["executions"]["predicted_s"][2]);
  CHECK_FALSE(repeated_off["executions"].contains("compute_factors"));
  CHECK_FALSE(repeated_off["executions"].contains("reference_timings"));
  CHECK_FALSE(repeated_off["executions"].contains("reference_spread"));
  std::sort(off_makespans_s.begin(), off_makespans_s.end());
  CHECK(repeated_off["end_to_end"]["measured_s"].get<double>() == off_makespans_s[1]);
  // By default three executions after a warm-up; --repeats 1 times one, without a warm-up.
  CHECK(on["executions"]["timed"] == 3);
  CHECK(on["executions"]["warm_up"] == true);
  const auto once = run_json("--calibration cli_test_cpu_cal.json --repeats 1");
  CHECK(once["executions"]["timed"] == 1);
  CHECK(once["executions"]["warm_up"] == false);
  CHECK(once["executions"]["compared"] == 0);
  for (const char* count : {"0", "101"}) {
    Run outside = tessera(std::string("validate --algo ring --gpus 4 --seq 256 --repeats ") + count);
    CHECK(outside.exit_code == 2);
    CHECK(outside.err.find("--repeats: expected 1 to 100 timed executions, got " + std::string(count)) != std::string::npos);
  }
  Run bad = tessera("validate --algo ring --gpus 4 --seq 256 --calibration cli_test_cpu_cal.json --speed-reference maybe");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--speed-reference: expected on, compute or off, got 'maybe'") != std::string::npos);
  Run negative = tessera("validate --algo ring --gpus 4 --seq 256 --devices -1");
  CHECK(negative.exit_code == 2);
  CHECK(negative.err.find("--devices") != std::string::npos);
  Run on_cuda = tessera("run --algo ring --gpus 4 --seq 256 --backend cuda --devices 2");
  CHECK(on_cuda.exit_code == 2);
  CHECK(on_cuda.err.find("--devices") != std::string::npos);
}
