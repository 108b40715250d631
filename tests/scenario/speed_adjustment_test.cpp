// The speed adjustment of `tessera validate` (scenario/speed_adjustment.hpp): hand-worked factors from
// reference times, and the compute model and devices curve they scale.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/scenario/speed_adjustment.hpp"

using namespace tessera;
using namespace tessera::scenario;
using tessera::sim::GpuProfile;
using tessera::sim::block_compute_s;

namespace {
CalibratedSpeedReference reference_of(int32_t devices, SpeedReferenceTimes times) {
  CalibratedSpeedReference reference;
  reference.side_tokens = 256;
  reference.heads = 4;
  reference.head_dim = 32;
  reference.devices = devices;
  reference.times = times;
  return reference;
}
}  // namespace

TEST_CASE("speed factors are the reference's times now over the calibrated model's", "[scenario][speed]") {
  // One device: 15 ms now against 10 ms modelled is 1.5 times slower; the devices factor stays 1.
  const SpeedFactors one = speed_factors(reference_of(1, {0.010}), {0.015}, {}, 0.010);
  CHECK(one.compute == Approx(1.5));
  CHECK(one.devices == 1);
  // Two devices: now 2 x 12 ms / 16 ms = 1.5x one, against the calibrated curve's 1.875x: 0.8.
  const SpeedFactors two = speed_factors(reference_of(2, {0.010, 0.008, 0.0042}), {0.020, 0.012, 0.016}, {1, 1.875}, 0.010);
  CHECK(two.compute == Approx(2.0));
  CHECK(two.devices == Approx(0.8));
  // A curve shorter than the reference's devices: its last entry (1.5x); none: factor 1.
  CHECK(speed_factors(reference_of(3, {0.010, 0.008, 0.004}), {0.010, 0.009, 0.009}, {1, 1.5}, 0.010).devices == Approx(2.0));
  CHECK(speed_factors(reference_of(2, {0.010, 0.008, 0.004}), {0.010, 0.009, 0.009}, {}, 0.010).devices == 1);
  // Before x1.5 and after x2.5: the mean, x2.
  const SpeedFactors mean = combined_factors({1.5, 0.9}, {2.5, 1.1});
  CHECK(mean.compute == Approx(2.0));
  CHECK(mean.devices == Approx(1.0));
  CHECK_THROWS_AS(speed_factors(reference_of(1, {0.010}), {0}, {}, 0.010), UserError);
  CHECK_THROWS_AS(speed_factors(reference_of(1, {0.010}), {0.010}, {}, 0), UserError);
  CHECK_THROWS_AS(speed_factors(reference_of(2, {0.010, 0.008, 0.004}), {0.010, 0, 0.004}, {1, 1.9}, 0.010), UserError);
}

TEST_CASE("the compute factor compares the block now with the model's time for it, not the reference's own", "[scenario][speed]") {
  // The reference's block: 256 x 256 tokens, 4 heads of 32, bf16, full, forward:
  // 4 heads x 2 x 256^2 pairs x (32 + 32) = 33,554,432 FLOPs. On a model of 1e9 FLOP/s at
  // efficiency 1 with per-row work of half 64 tokens over the side of 256 (a quarter more) and
  // 1 ms per block: 33,554,432 x 1.25 / 1e9 + 1e-3 = 42.943 04 ms.
  GpuProfile gpu;
  gpu.peak_flops_per_s_16bit = 1e9;
  gpu.max_efficiency = 1;
  gpu.half_efficiency_tokens = 64;
  gpu.launch_overhead_s = 1e-3;
  gpu.block_model = GpuProfile::BlockModel{0.5, 0.5, 0};
  CalibratedSpeedReference reference = reference_of(1, {0.050});
  reference.dtype = "bf16";
  const double modelled_s = 33554432.0 * 1.25 / 1e9 + 1e-3;
  CHECK(modelled_block_s(reference, gpu) == Approx(modelled_s).epsilon(1e-12));
  // Timed at 50 ms during the calibration, but the fit says 42.9 ms: a block of 85.9 ms now is
  // twice the model's, so the model runs twice as slow (against its own time, 1.72 times).
  CHECK(speed_factors(reference, {2 * modelled_s}, {}, modelled_block_s(reference, gpu)).compute == Approx(2.0));
}

TEST_CASE("a compute factor scales every block and merge time by itself", "[scenario][speed]") {
  GpuProfile gpu;
  gpu.peak_flops_per_s_fp32 = 1e9;
  gpu.max_efficiency = 1;
  gpu.half_efficiency_tokens = 100;
  gpu.launch_overhead_s = 1e-3;
  gpu.hbm_bytes_per_s = 4e9;
  // A 100 x 100 block of 1e7 FLOPs at efficiency 100 / (100 + 100) = 0.5: 1e7 / 5e8 + 1 ms = 21 ms.
  CHECK(block_compute_s(gpu, DType::fp32, Pass::forward, 100, 100, 1e7, 1e7) == Approx(0.021));
  const GpuProfile slower = with_compute_factor(gpu, 2);
  CHECK(block_compute_s(slower, DType::fp32, Pass::forward, 100, 100, 1e7, 1e7) == Approx(0.042));
  CHECK(slower.hbm_bytes_per_s == Approx(2e9));
  // The block model of an executor that visits every pair: half the pairs masked at cost 0.2,
  // per-row work of half 50 over side 100: (5e6 + 0.2 x 5e6 + 1e7 x 50 / 100) / 1e9 + 1 ms = 12 ms.
  gpu.block_model = GpuProfile::BlockModel{0.2, 0.2, 50};
  gpu.half_efficiency_tokens = 50;
  CHECK(block_compute_s(gpu, DType::fp32, Pass::forward, 100, 100, 5e6, 1e7) == Approx(0.012));
  CHECK(block_compute_s(with_compute_factor(gpu, 0.5), DType::fp32, Pass::forward, 100, 100, 5e6, 1e7) == Approx(0.006));
  CHECK_THROWS_AS(with_compute_factor(gpu, 0), UserError);
}

TEST_CASE("a devices factor scales the busy devices' curve up to the reference's devices and beyond", "[scenario][speed]") {
  // Two devices: 1.9x at calibration, x0.5 now: 0.95x; one device stays 1.
  const std::vector<double> two = with_devices_factor({1, 1.9}, 0.5, 2);
  REQUIRE(two.size() == 2);
  CHECK(two[0] == 1);
  CHECK(two[1] == Approx(0.95));
  // Measured at 3 devices, x0.8: 2 busy by 1 - 0.2 x 1/2 = 0.9 (1.8 -> 1.62), 3 by 0.8
  // (2.6 -> 2.08), 4 (beyond the reference) by 0.8 too (3.2 -> 2.56).
  const std::vector<double> four = with_devices_factor({1, 1.8, 2.6, 3.2}, 0.8, 3);
  CHECK(four[0] == 1);
  CHECK(four[1] == Approx(1.62));
  CHECK(four[2] == Approx(2.08));
  CHECK(four[3] == Approx(2.56));
  // A reference of one device leaves the curve.
  CHECK(with_devices_factor({1, 1.8}, 0.5, 1) == std::vector<double>{1, 1.8});
  // Two devices never deliver more than twice one: 1.8 x 1.5 = 2.7 stops at 2.
  CHECK(with_devices_factor({1, 1.8}, 1.5, 2)[1] == 2);
}

TEST_CASE("the spread of the reference over a validation is its largest factor over its smallest", "[scenario][speed]") {
  // Three timings, worked by hand: compute 0.60, 0.96, 0.90 -> 0.96 / 0.60 = 1.6; devices 1.00,
  // 1.30, 1.20 -> 1.3. Both over 10 %: unsteady; within 60 % both are held.
  const SpeedSpread moved = speed_spread({{0.60, 1.00}, {0.96, 1.30}, {0.90, 1.20}});
  CHECK(moved.compute == Approx(1.6));
  CHECK(moved.devices == Approx(1.3));
  CHECK_FALSE(moved.steady(0.10));
  CHECK(moved.steady(0.60));
  // Compute steady (1.02 / 1.00) but devices 0.85 -> 0.99 (16.5 %): unsteady at 10 %.
  const SpeedSpread devices_moved = speed_spread({{1.00, 0.85}, {1.02, 0.99}});
  CHECK(devices_moved.compute == Approx(1.02));
  CHECK(devices_moved.devices == Approx(0.99 / 0.85));
  CHECK_FALSE(devices_moved.steady(0.10));
  // Within 10 % on both (1.08 and 1.05): steady; one timing: nothing moved.
  CHECK(speed_spread({{1.00, 1.00}, {1.08, 0.95}, {1.04, 0.9975}}).steady(0.10));
  const SpeedSpread one = speed_spread({{1.3, 0.7}});
  CHECK(one.compute == 1);
  CHECK(one.devices == 1);
  // No timing, or a broken one: UserError.
  CHECK_THROWS_AS(speed_spread({}), UserError);
  CHECK_THROWS_AS(speed_spread({{1.0, 1.0}, {0.0, 1.0}}), UserError);
  CHECK_THROWS_AS(speed_spread({{1.0, -1.0}}), UserError);
}
