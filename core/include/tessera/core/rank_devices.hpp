#pragma once
// Ranks on devices: which device each of P ranks runs on when there are D <= P devices (CPU
// cores for the threaded CPU executor, one GPU for virtual ranks). Contiguous, balanced groups,
// rank r on device floor(r x D / P), so ring neighbours tend to share a device. The executor
// and the simulator's prediction of it use this one map, so they agree on who shares what.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera {

inline std::vector<int32_t> ranks_on_devices(int32_t ranks, int32_t devices) {
  devices = std::clamp(devices, 1, std::max(1, ranks));
  std::vector<int32_t> device_of_rank(static_cast<size_t>(std::max(0, ranks)));
  for (int32_t rank = 0; rank < ranks; ++rank)
    device_of_rank[static_cast<size_t>(rank)] =
        static_cast<int32_t>(static_cast<int64_t>(rank) * devices / ranks);
  return device_of_rank;
}

}  // namespace tessera
