#pragma once
// An engine client for tests that drive the engine directly: it records when each transfer
// arrived.
#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/sim/engine.hpp"

namespace tessera::test_support {

struct Arrivals final : sim::EngineClient {
  const sim::Engine* engine = nullptr;
  std::vector<std::pair<int32_t, double>> arrived;
  void transfer_arrived(int32_t transfer) override { arrived.emplace_back(transfer, engine->now_s()); }
};

}  // namespace tessera::test_support
