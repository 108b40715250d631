// The hardware a scenario's text gives (scenario::make_hardware): the defaults are the H100 and
// 400 Gb/s InfiniBand figures, to the bit as before there was a table of presets; bandwidths
// with their unit give the same doubles as the deprecated GB/s numbers; bad values name the flag.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/scenario/scenario.hpp"

using namespace tessera;
using Catch::Matchers::StartsWith;

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
  REQUIRE_THROWS_WITH(scenario::make_hardware(negative), StartsWith("--bandwidth-gbps: must be positive"));
}
