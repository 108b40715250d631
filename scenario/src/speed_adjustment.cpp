#include "tessera/scenario/speed_adjustment.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::scenario {

SpeedFactors speed_factors(const CalibratedSpeedReference& calibrated, const SpeedReferenceTimes& now,
                           const std::vector<double>& devices_speedup, double modelled_block_s) {
  if (!(modelled_block_s > 0) || !(now.block_s > 0))
    throw UserError("speed reference: the reference block's time must be above 0 s");
  SpeedFactors factors;
  factors.compute = now.block_s / modelled_block_s;
  if (calibrated.devices > 1 && !devices_speedup.empty()) {
    if (!(now.alone_s > 0 && now.devices_s > 0)) throw UserError("speed reference: the busy devices' times must be above 0 s");
    const size_t level = std::min(devices_speedup.size(), static_cast<size_t>(calibrated.devices)) - 1;
    factors.devices = calibrated.devices * now.alone_s / now.devices_s / devices_speedup[level];
  }
  return factors;
}

double modelled_block_s(const CalibratedSpeedReference& reference, const sim::GpuProfile& gpu) {
  Problem block;
  block.head_dim = reference.head_dim;
  block.head_dim_v = reference.head_dim;
  const auto side = static_cast<double>(reference.side_tokens);
  const double flops = static_cast<double>(reference.heads) * forward_flops_per_head(block, side * side);
  return sim::block_compute_s(gpu, parse_dtype(reference.dtype), Pass::forward, side, side, flops, flops);
}

SpeedFactors combined_factors(const SpeedFactors& before, const SpeedFactors& after) {
  return {(before.compute + after.compute) / 2, (before.devices + after.devices) / 2};
}

SpeedSpread speed_spread(const std::vector<SpeedFactors>& timings) {
  if (timings.empty()) throw UserError("speed reference: no timing to take the spread of");
  auto spread = [&](double SpeedFactors::*factor) {
    double least = timings.front().*factor, most = least;
    for (const SpeedFactors& timing : timings) {
      if (!(timing.*factor > 0)) throw UserError("speed reference: a factor must be above 0");
      least = std::min(least, timing.*factor);
      most = std::max(most, timing.*factor);
    }
    return most / least;
  };
  return {spread(&SpeedFactors::compute), spread(&SpeedFactors::devices)};
}

sim::GpuProfile with_compute_factor(sim::GpuProfile gpu, double compute_factor) {
  if (!(compute_factor > 0)) throw UserError("speed reference: the compute factor must be above 0");
  gpu.peak_flops_per_s_16bit /= compute_factor;
  gpu.peak_flops_per_s_fp32 /= compute_factor;
  gpu.hbm_bytes_per_s /= compute_factor;
  gpu.launch_overhead_s *= compute_factor;
  return gpu;
}

std::vector<double> with_devices_factor(std::vector<double> devices_speedup, double devices_factor, int32_t devices) {
  if (!(devices_factor > 0)) throw UserError("speed reference: the devices factor must be above 0");
  if (devices < 2) return devices_speedup;
  for (size_t index = 1; index < devices_speedup.size(); ++index) {
    const double busy = static_cast<double>(index + 1);
    const double share = std::min(1.0, (busy - 1) / (devices - 1));
    devices_speedup[index] = std::clamp(devices_speedup[index] * (1 + (devices_factor - 1) * share), 1e-3, busy);
  }
  return devices_speedup;
}

}  // namespace tessera::scenario
