// The hardware a scenario's text gives (scenario::make_hardware): the defaults are the H100 and
// 400 Gb/s InfiniBand figures, to the bit as before there was a table of presets; bandwidths
// with their unit give the same doubles as the deprecated GB/s numbers; bad values name the flag.
#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/scenario/scenario.hpp"

using namespace tessera;
using Catch::Matchers::StartsWith;
using Catch::Matchers::Contains;

TEST_CASE("the default hardware: H100 SXM at 60 %, 400 Gb/s InfiniBand per GPU", "[scenario][hardware]") {
  const costmodel::Hardware hardware = scenario::make_hardware(scenario::HardwareValues{});
  CHECK(hardware.peak_flops_per_s == 989e12);
  CHECK(hardware.compute_efficiency == 0.6);
  CHECK(hardware.hbm_bytes_per_s == 3.35e12);
  CHECK(hardware.link_bytes_per_s == 50e9);  // 400e9 bits / 8
  // 5 us typed as microseconds and scaled (5 * 1e-6), which is one ulp from the literal 5e-6 of
  // costmodel::Hardware{}: the command line has always priced with this one.
  CHECK(hardware.link_latency_s == 5 * 1e-6);
  // The analytical model's own defaults: the same GPU and link.
  const costmodel::Hardware model;
  CHECK(model.peak_flops_per_s == hardware.peak_flops_per_s);
  CHECK(model.compute_efficiency == hardware.compute_efficiency);
  CHECK(model.hbm_bytes_per_s == hardware.hbm_bytes_per_s);
  CHECK(model.link_bytes_per_s == hardware.link_bytes_per_s);
  CHECK(model.link_latency_s == 5e-6);
}

TEST_CASE("bandwidths with a unit give the doubles of the GB/s numbers they replace", "[scenario][hardware][units]") {
  auto with = [](const char* bandwidth, const char* hbm_bandwidth) {
    scenario::HardwareValues values;
    values.bandwidth = bandwidth;
    values.hbm_bandwidth = hbm_bandwidth;
    return scenario::make_hardware(values);
  };
  auto with_gbps = [](double bandwidth_gbps, double hbm_gbps) {
    scenario::HardwareValues values;
    values.bandwidth_gbps = bandwidth_gbps;
    values.hbm_gbps = hbm_gbps;
    return scenario::make_hardware(values);
  };
  CHECK(with("400Gb/s", "3.35TB/s").link_bytes_per_s == with_gbps(50, 3350).link_bytes_per_s);
  CHECK(with("400Gb/s", "3.35TB/s").hbm_bytes_per_s == with_gbps(50, 3350).hbm_bytes_per_s);
  CHECK(with("100Gb/s", "4.8TB/s").link_bytes_per_s == with_gbps(12.5, 4800).link_bytes_per_s);
  CHECK(with("33.3GB/s", "2039GB/s").link_bytes_per_s == with_gbps(33.3, 2039).link_bytes_per_s);
  // The text wins over the number when both are set.
  scenario::HardwareValues both;
  both.bandwidth = "800Gb/s";
  both.bandwidth_gbps = 1;
  CHECK(scenario::make_hardware(both).link_bytes_per_s == 100e9);
}

TEST_CASE("bad hardware values name their flag", "[scenario][hardware][units]") {
  scenario::HardwareValues no_unit;
  no_unit.bandwidth = "50";
  REQUIRE_THROWS_WITH(scenario::make_hardware(no_unit), StartsWith("--bandwidth: '50' has no unit"));
  scenario::HardwareValues binary;
  binary.hbm_bandwidth = "3TiB/s";
  REQUIRE_THROWS_WITH(scenario::make_hardware(binary), StartsWith("--hbm-bandwidth: "));
  scenario::HardwareValues negative;
  negative.bandwidth_gbps = -5;
  REQUIRE_THROWS_WITH(scenario::make_hardware(negative), StartsWith("--bandwidth-gbps: expected a bandwidth"));
}

TEST_CASE("hardware values that are not finite or out of range name their flag", "[scenario]") {
  using tessera::scenario::HardwareValues;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    double HardwareValues::*field;
    const char* flag;
    std::vector<double> bad;
  };
  const std::vector<Case> cases = {
      {&HardwareValues::peak_tflops, "--peak-tflops", {inf, -inf, nan, 0, -1, 1e-7, 2e6}},
      {&HardwareValues::efficiency, "--efficiency", {inf, nan, 0, 1e-7, 1.01}},
      {&HardwareValues::bandwidth_gbps, "--bandwidth-gbps", {inf, nan, 0, -1, 1e-300, 1e10}},
      {&HardwareValues::hbm_gbps, "--hbm-gbps", {inf, nan, 0}},
      {&HardwareValues::latency_us, "--latency-us", {inf, -inf, nan, -1e-9, 1.5e6}},
      {&HardwareValues::launch_us, "--launch-us", {inf, nan, -1}},
      {&HardwareValues::overhead_us, "--overhead-us", {inf, nan, -1}},
      {&HardwareValues::nvlink_message_us, "--nvlink-message-us", {inf, nan, -1}},
      {&HardwareValues::network_message_us, "--network-message-us", {inf, nan, -1}},
  };
  for (const Case& entry : cases)
    for (double value : entry.bad) {
      HardwareValues values;
      values.*entry.field = value;
      INFO(entry.flag << " " << value);
      REQUIRE_THROWS_WITH(tessera::scenario::make_hardware(values), StartsWith(std::string(entry.flag) + ": "));
    }
  // The ends of each range are accepted: 1 MFLOP/s at 1e-6 of peak, latencies of 0 and 1 s.
  HardwareValues edges;
  edges.peak_tflops = 1e-6;
  edges.efficiency = 1e-6;
  edges.latency_us = 1e6;
  edges.overhead_us = 0;
  const auto hardware = tessera::scenario::make_hardware(edges);
  CHECK(hardware.peak_flops_per_s == 1e6);
  CHECK(hardware.link_latency_s == 1.0);
}
