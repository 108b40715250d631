// The calibration file's one reader and writer (core/calibration_file.hpp): what is written
// reads back the same, fields left out stay out, and bad files are refused naming the field.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/scratch.hpp"
#include "tessera/core/calibration_file.hpp"
#include "tessera/core/error.hpp"

using namespace tessera;
using test_support::scratch_path;

namespace {
void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
}  // namespace

TEST_CASE("a calibration file reads back what was written", "[backend][calibration]") {
  CalibrationFile written;
  written.gpu = "a100";
  written.device = "cuda/local";
  written.peak_flops_per_s_fp32 = 1.5e14;
  written.max_efficiency = 1.0;
  written.half_efficiency_tokens = 310;
  written.launch_overhead_s = 6e-6;
  written.backward_rate_ratio = 0.8;
  written.hbm_bytes_per_s = 2.1e12;
  written.message = CalibratedMessageCosts{2e-6, std::nullopt, 6e-6};
  written.link = CalibratedLink{3e11, 1e-5};
  written.sharing = CalibratedSharing{{1, 1.7, 2.2}, 2e10, {1, 1.4}};
  written.block_model = CalibratedBlockModel{0.12, 0.03, 17};
  written.measured = CalibrationRecord{4, 64, "fp32", {{128, 8.4e6, 1e-5, 3e-5}}, 3.0, 8.4e11, 0.04};
  write_calibration_file(scratch_path("calibration_round_trip.json"), written);

  const CalibrationFile read = read_calibration_file(scratch_path("calibration_round_trip.json"));
  CHECK(read.gpu == "a100");
  CHECK(read.device == "cuda/local");
  CHECK(read.peak_flops_per_s_fp32 == 1.5e14);
  CHECK_FALSE(read.peak_flops_per_s_16bit.has_value());
  CHECK(read.max_efficiency == 1.0);
  CHECK(read.half_efficiency_tokens == 310);
  CHECK(read.launch_overhead_s == 6e-6);
  CHECK(read.backward_rate_ratio == 0.8);
  CHECK(read.hbm_bytes_per_s == 2.1e12);
  REQUIRE(read.message.has_value());
  CHECK(read.message->overhead_s == 2e-6);
  CHECK_FALSE(read.message->nvlink_latency_s.has_value());
  CHECK(read.message->network_latency_s == 6e-6);
  REQUIRE(read.link.has_value());
  CHECK(read.link->bytes_per_s == 3e11);
  CHECK(read.link->latency_s == 1e-5);
  REQUIRE(read.sharing.has_value());
  CHECK(read.sharing->concurrency_speedup == std::vector<double>{1, 1.7, 2.2});
  CHECK(read.sharing->copy_bytes_per_s == 2e10);
  CHECK(read.sharing->devices_speedup == std::vector<double>{1, 1.4});
  REQUIRE(read.block_model.has_value());
  CHECK(read.block_model->forward_masked_pair_cost == 0.12);
  CHECK(read.block_model->backward_masked_pair_cost == 0.03);
  CHECK(read.block_model->backward_half_efficiency_tokens == 17);
  CHECK_FALSE(read.measured.has_value());  // for the record only

  // The record is in the file, under the names a reader of the JSON sees.
  std::ifstream file(scratch_path("calibration_round_trip.json"));
  const nlohmann::json json = nlohmann::json::parse(file);
  CHECK(json.at("measured").at("blocks").at(0).at("side_tokens") == 128);
  CHECK(json.at("measured").at("dtype") == "fp32");
  CHECK(json.at("measured").at("spread") == 0.04);
  CHECK_FALSE(json.contains("peak_flops_per_s_16bit"));
  CHECK_FALSE(json.at("message").contains("nvlink_latency_s"));
}

TEST_CASE("measured per-message costs replace only their own fields", "[backend][calibration]") {
  const MessageCosts base{8.4e-6, 3.4e-6, 14e-6};
  const MessageCosts costs = CalibratedMessageCosts{std::nullopt, 1e-6, std::nullopt}.over(base);
  CHECK(costs.overhead_s == 8.4e-6);
  CHECK(costs.nvlink_latency_s == 1e-6);
  CHECK(costs.network_latency_s == 14e-6);
}

TEST_CASE("an empty calibration object is the h100 profile with nothing replaced", "[backend][calibration]") {
  write_text(scratch_path("calibration_empty.json"), "{}");
  const CalibrationFile read = read_calibration_file(scratch_path("calibration_empty.json"));
  CHECK(read.gpu == "h100");
  CHECK_FALSE(read.peak_flops_per_s_16bit.has_value());
  CHECK_FALSE(read.message.has_value());
  CHECK_FALSE(read.link.has_value());
}

TEST_CASE("a negative fitted link latency reads as none", "[backend][calibration]") {
  write_text(scratch_path("calibration_negative_latency.json"), R"({"link": {"bytes_per_s": 1e10, "latency_s": -2e-7}})");
  CHECK(read_calibration_file(scratch_path("calibration_negative_latency.json")).link->latency_s == 0);
}

TEST_CASE("bad calibration files are refused naming the file and the field", "[backend][calibration]") {
  // The file goes to the scratch folder; the message must start with its path, which is
  // shortened back to the file's name for the comparisons below.
  auto refusal = [](const std::string& name, const std::string& text) {
    const std::string path = scratch_path(name);
    write_text(path, text);
    try {
      read_calibration_file(path);
    } catch (const UserError& error) {
      const std::string message = error.what();
      return message.rfind(path, 0) == 0 ? name + message.substr(path.size()) : "not naming the file: " + message;
    }
    return std::string("accepted");
  };
  CHECK(refusal("calibration_bad_1.json", R"({"max_efficiency": -1})") ==
        "calibration_bad_1.json: max_efficiency: expected a number from 0.001 to 1, got -1");
  CHECK(refusal("calibration_bad_2.json", R"({"max_efficiency": 1.5})") ==
        "calibration_bad_2.json: max_efficiency: expected a number from 0.001 to 1, got 1.5");
  CHECK(refusal("calibration_bad_3.json", R"({"peak_flops_per_s_16bit": "fast"})") ==
        "calibration_bad_3.json: peak_flops_per_s_16bit: expected a number, got string");
  CHECK(refusal("calibration_bad_4.json", R"({"message": {"overhead_s": -1}})") ==
        "calibration_bad_4.json: message.overhead_s: expected a number from 0 to 1, got -1");
  CHECK(refusal("calibration_bad_5.json", R"({"message": 3})") ==
        "calibration_bad_5.json: message: expected a JSON object, got number");
  CHECK(refusal("calibration_bad_6.json", R"({"link": {"bytes_per_s": 0, "latency_s": 0}})") ==
        "calibration_bad_6.json: link.bytes_per_s: expected a number from 1e+06 to 1e+15, got 0");
  CHECK(refusal("calibration_bad_7.json", R"({"link": {"bytes_per_s": 1e9}})") ==
        "calibration_bad_7.json: link.latency_s: missing");
  CHECK(refusal("calibration_bad_8.json", "[1, 2]") == "calibration_bad_8.json: expected a JSON object, got array");
  CHECK(refusal("calibration_bad_9.json", R"({"gpu": 100})") ==
        "calibration_bad_9.json: gpu: expected the name of a GPU profile (h100, h200, a100), got number");
  const std::string syntax = refusal("calibration_bad_10.json", "{not json");
  CHECK(syntax.rfind("calibration_bad_10.json:1:", 0) == 0);
  CHECK(syntax.find(": not valid JSON (") != std::string::npos);
  // The ranges of the header: a tiny peak or efficiency once stalled the simulation.
  CHECK(refusal("calibration_bad_11.json", R"({"peak_flops_per_s_16bit": 1e-12})") ==
        "calibration_bad_11.json: peak_flops_per_s_16bit: expected a number from 1e+06 to 1e+18, got 1e-12");
  CHECK(refusal("calibration_bad_12.json", R"({"max_efficiency": 1e-6})") ==
        "calibration_bad_12.json: max_efficiency: expected a number from 0.001 to 1, got 1e-06");
  CHECK(refusal("calibration_bad_13.json", R"({"half_efficiency_tokens": 0})") ==
        "calibration_bad_13.json: half_efficiency_tokens: expected a number from 0 (exclusive) to 1e+06, got 0");
  CHECK(refusal("calibration_bad_14.json", R"({"launch_overhead_s": 2})") ==
        "calibration_bad_14.json: launch_overhead_s: expected a number from 0 to 1, got 2");
  CHECK(refusal("calibration_bad_15.json", R"({"hbm_bytes_per_s": 1e16})") ==
        "calibration_bad_15.json: hbm_bytes_per_s: expected a number from 1e+06 to 1e+15, got 1e+16");
  CHECK(refusal("calibration_bad_16.json", R"({"gpu": "h1000"})") ==
        "calibration_bad_16.json: gpu: unknown GPU profile 'h1000' (expected h100, h200, a100)");
  CHECK(refusal("calibration_bad_17.json", R"({"link": {"bytes_per_s": 1e9, "latency_s": 0, "jitter_s": 0}})") ==
        "calibration_bad_17.json: link.jitter_s: unknown field (expected one of bytes_per_s, latency_s)");
  CHECK(refusal("calibration_bad_18.json", R"({"peak_flops_per_s_16bit": 1e999})")
            .rfind("calibration_bad_18.json", 0) == 0);
  CHECK(refusal("calibration_bad_19.json", "") .rfind("calibration_bad_19.json:1:1: not valid JSON", 0) == 0);
  CHECK_THROWS_WITH(read_calibration_file("calibration_no_such_file.json"),
                    "calibration_no_such_file.json: cannot open the calibration file");
}

TEST_CASE("a calibration file without the sharing object (older files) reads, with no sharing", "[backend][calibration]") {
  write_text(scratch_path("calibration_old.json"), R"({"gpu": "h100", "link": {"bytes_per_s": 1e9, "latency_s": 0}})");
  const CalibrationFile read = read_calibration_file(scratch_path("calibration_old.json"));
  CHECK_FALSE(read.sharing.has_value());
  REQUIRE(read.link.has_value());
}

TEST_CASE("a bad sharing object is refused naming the field", "[backend][calibration]") {
  auto message = [](const std::string& text) {
    write_text(scratch_path("calibration_sharing.json"), text);
    try {
      read_calibration_file(scratch_path("calibration_sharing.json"));
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message(R"({"sharing": {"concurrency_speedup": [2, 3]}})"),
             Catch::Contains("sharing.concurrency_speedup[0]: expected 1"));
  CHECK_THAT(message(R"({"sharing": {"concurrency_speedup": [1, 0]}})"),
             Catch::Contains("sharing.concurrency_speedup[1]: expected a number from 0.001"));
  CHECK_THAT(message(R"({"sharing": {"concurrency_speedup": []}})"), Catch::Contains("sharing.concurrency_speedup: expected an array"));
  CHECK_THAT(message(R"({"sharing": {"copy_bytes_per_s": 5}})"), Catch::Contains("sharing.copy_bytes_per_s: expected a number from 1e+06"));
  CHECK_THAT(message(R"({"sharing": {"copies": 5}})"), Catch::Contains("sharing.copies: unknown field"));
  CHECK_THAT(message(R"({"sharing": {"devices_speedup": [1.5, 2]}})"), Catch::Contains("sharing.devices_speedup[0]: expected 1"));
  CHECK_THAT(message(R"({"sharing": {"devices_speedup": [1, -1]}})"),
             Catch::Contains("sharing.devices_speedup[1]: expected a number from 0.001"));
}

TEST_CASE("a bad block model is refused naming the field", "[backend][calibration]") {
  auto message = [](const std::string& text) {
    write_text(scratch_path("calibration_block_model.json"), text);
    try {
      read_calibration_file(scratch_path("calibration_block_model.json"));
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  const std::string costs = R"("forward_masked_pair_cost": 0.1, "backward_masked_pair_cost": 0.2)";
  CHECK_THAT(message(R"({"block_model": {"forward_masked_pair_cost": -0.1, "backward_masked_pair_cost": 0, "backward_half_efficiency_tokens": 0}})"),
             Catch::Contains("block_model.forward_masked_pair_cost: expected a number from 0 to 1000, got -0.1"));
  CHECK_THAT(message(R"({"block_model": {)" + costs + "}}"), Catch::Contains("block_model.backward_half_efficiency_tokens: missing"));
  CHECK_THAT(message(R"({"block_model": {)" + costs + R"(, "backward_half_efficiency_tokens": 2e6}})"),
             Catch::Contains("block_model.backward_half_efficiency_tokens: expected a number from 0 to 1e+06, got 2e+06"));
  CHECK_THAT(message(R"({"block_model": {)" + costs + R"(, "backward_half_efficiency_tokens": 0, "sideways": 1}})"),
             Catch::Contains("block_model.sideways: unknown field"));
  CHECK_THAT(message(R"({"block_model": 0.1})"), Catch::Contains("block_model: expected a JSON object"));
  CHECK(message(R"({"block_model": {)" + costs + R"(, "backward_half_efficiency_tokens": 0}})") == "accepted");
}

TEST_CASE("calibration figures at the edges of their ranges are read", "[backend][calibration]") {
  write_text(scratch_path("calibration_edges.json"),
             R"({"peak_flops_per_s_16bit": 1e6, "peak_flops_per_s_fp32": 1e18, "max_efficiency": 0.001,
                 "half_efficiency_tokens": 1e6, "launch_overhead_s": 0, "backward_rate_ratio": 1000,
                 "hbm_bytes_per_s": 1e15, "message": {"overhead_s": 1, "nvlink_latency_s": 0},
                 "link": {"bytes_per_s": 1e6, "latency_s": 1}, "measured": ["any", {"json": null}]})");
  const CalibrationFile read = read_calibration_file(scratch_path("calibration_edges.json"));
  CHECK(read.peak_flops_per_s_16bit == 1e6);
  CHECK(read.peak_flops_per_s_fp32 == 1e18);
  CHECK(read.max_efficiency == 0.001);
  CHECK(read.half_efficiency_tokens == 1e6);
  CHECK(read.launch_overhead_s == 0);
  CHECK(read.backward_rate_ratio == 1000);
  CHECK(read.hbm_bytes_per_s == 1e15);
  CHECK(read.message->overhead_s == 1);
  CHECK(read.link->bytes_per_s == 1e6);
  CHECK(read.link->latency_s == 1);
}

TEST_CASE("a device name that is not UTF-8 is written (replaced) and reads back", "[backend][calibration]") {
  CalibrationFile written;
  written.device = "cuda/\xff\xfe";
  write_calibration_file(scratch_path("calibration_device_utf8.json"), written);
  const CalibrationFile read = read_calibration_file(scratch_path("calibration_device_utf8.json"));
  CHECK(read.device == "cuda/\xEF\xBF\xBD\xEF\xBF\xBD");  // each bad byte is U+FFFD
}

TEST_CASE("the per-level links read back, and are checked as link is", "[backend][calibration]") {
  CalibrationFile written;
  written.link = CalibratedLink{3.4e11, 1.2e-5};
  written.intra_node_link = CalibratedLink{2.1e11, 3e-6};
  written.inter_node_link = CalibratedLink{5e10, 1.4e-5};
  const std::string path = scratch_path("calibration_levels.json");
  write_calibration_file(path, written);
  const CalibrationFile read = read_calibration_file(path);
  REQUIRE(read.intra_node_link.has_value());
  REQUIRE(read.inter_node_link.has_value());
  CHECK(read.intra_node_link->bytes_per_s == 2.1e11);
  CHECK(read.intra_node_link->latency_s == 3e-6);
  CHECK(read.inter_node_link->bytes_per_s == 5e10);
  CHECK(read.inter_node_link->latency_s == 1.4e-5);
  CHECK(read.link->bytes_per_s == 3.4e11);
  // A file from before the per-level fields reads as it did: none of them.
  write_text(scratch_path("calibration_old.json"), R"({"gpu": "h100", "link": {"bytes_per_s": 1e10, "latency_s": 1e-6}})");
  const CalibrationFile old = read_calibration_file(scratch_path("calibration_old.json"));
  CHECK_FALSE(old.intra_node_link.has_value());
  CHECK_FALSE(old.inter_node_link.has_value());
  // The same ranges and field names as link, with the level in the path.
  write_text(scratch_path("calibration_bad_level.json"), R"({"inter_node_link": {"bytes_per_s": 0, "latency_s": 0}})");
  REQUIRE_THROWS_WITH(read_calibration_file(scratch_path("calibration_bad_level.json")),
                      Catch::Contains("inter_node_link.bytes_per_s: expected a number from 1e+06 to 1e+15, got 0"));
  write_text(scratch_path("calibration_bad_level2.json"), R"({"intra_node_link": {"bytes_per_s": 1e9}})");
  REQUIRE_THROWS_WITH(read_calibration_file(scratch_path("calibration_bad_level2.json")),
                      Catch::Contains("intra_node_link.latency_s: missing"));
}

TEST_CASE("the speed reference reads back what was written, and older files read without it", "[backend][calibration]") {
  CalibrationFile written;
  CalibratedSpeedReference reference;
  reference.side_tokens = 256;
  reference.heads = 4;
  reference.head_dim = 32;
  reference.dtype = "bf16";
  reference.devices = 2;
  reference.times = {0.0102, 0.0068, 0.0071};
  written.speed_reference = reference;
  write_calibration_file(scratch_path("calibration_speed_reference.json"), written);
  const CalibrationFile read = read_calibration_file(scratch_path("calibration_speed_reference.json"));
  REQUIRE(read.speed_reference.has_value());
  CHECK(read.speed_reference->side_tokens == 256);
  CHECK(read.speed_reference->heads == 4);
  CHECK(read.speed_reference->head_dim == 32);
  CHECK(read.speed_reference->dtype == "bf16");
  CHECK(read.speed_reference->devices == 2);
  CHECK(read.speed_reference->times.block_s == 0.0102);
  CHECK(read.speed_reference->times.alone_s == 0.0068);
  CHECK(read.speed_reference->times.devices_s == 0.0071);

  // One device: no busy-devices times written, none read.
  written.speed_reference->devices = 1;
  write_calibration_file(scratch_path("calibration_speed_reference_1.json"), written);
  std::ifstream file(scratch_path("calibration_speed_reference_1.json"));
  const nlohmann::json json = nlohmann::json::parse(file);
  CHECK_FALSE(json.at("speed_reference").contains("alone_s"));
  const CalibrationFile one = read_calibration_file(scratch_path("calibration_speed_reference_1.json"));
  CHECK(one.speed_reference->times.devices_s == 0);

  write_text(scratch_path("calibration_no_reference.json"), R"({"gpu": "h100", "peak_flops_per_s_fp32": 3e9})");
  CHECK_FALSE(read_calibration_file(scratch_path("calibration_no_reference.json")).speed_reference.has_value());
}

TEST_CASE("a bad speed reference is refused naming the field", "[backend][calibration]") {
  auto message = [](const std::string& fields) {
    const std::string path = scratch_path("calibration_bad_reference.json");
    write_text(path, R"({"speed_reference": {)" + fields + "}}");
    try {
      read_calibration_file(path);
    } catch (const UserError& error) {
      return std::string(error.what()).substr(path.size() + 2);
    }
    return std::string("accepted");
  };
  const std::string shape = R"("side_tokens": 256, "heads": 4, "head_dim": 32, "dtype": "fp32", )";
  CHECK(message(shape + R"("block_s": 0.01, "devices": 1)") == "accepted");
  CHECK(message(shape + R"("block_s": 0, "devices": 1)") ==
        "speed_reference.block_s: expected a number from 0 (exclusive) to 100, got 0");
  CHECK(message(shape + R"("block_s": 0.01, "devices": 0)") == "speed_reference.devices: expected a number from 1 to 4096, got 0");
  CHECK(message(shape + R"("block_s": 0.01, "devices": 1.5)") == "speed_reference.devices: expected a whole number, got 1.5");
  CHECK(message(shape + R"("block_s": 0.01, "devices": 2, "alone_s": 0.01)") == "speed_reference.devices_s: missing");
  CHECK(message(shape + R"("block_s": 0.01, "devices": 1, "alone_s": 0.01)") ==
        "speed_reference.alone_s: expected only where devices is 2 or more (devices is 1)");
  CHECK(message(shape + R"("block_s": 0.01, "devices": 2, "alone_s": 0.01, "devices_s": -1)") ==
        "speed_reference.devices_s: expected a number from 0 (exclusive) to 100, got -1");
  CHECK(message(R"("side_tokens": 256, "heads": 4, "head_dim": 32, "dtype": "int8", "block_s": 0.01, "devices": 1)") ==
        "speed_reference.dtype: expected fp32, bf16 or fp16, got 'int8'");
  CHECK(message(R"("heads": 4, "head_dim": 32, "dtype": "fp32", "block_s": 0.01, "devices": 1)") ==
        "speed_reference.side_tokens: missing");
  CHECK(message(shape + R"("block_s": 0.01, "devices": 1, "speed": 2)").rfind("speed_reference.speed: unknown field", 0) == 0);
}
