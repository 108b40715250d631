// The executor's watchdog thread, with a stand-in transport: it aborts once when progress stops
// for its limit, names the op waited on, and stays quiet while progress comes. Runs without a GPU.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "watchdog.hpp"

using namespace tessera::backend::cuda;

namespace {

struct CountingTransport final : DeviceTransport {
  std::string name() const override { return "counting"; }
  int device_of(int32_t) const override { return 0; }
  void begin_group() override {}
  void copy(const Endpoint&, const Endpoint&, size_t, const std::string&) override {}
  void end_group(const std::string&) override {}
  void abort() noexcept override { ++aborts; }
  std::atomic<int> aborts{0};
};

}  // namespace

TEST_CASE("the watchdog aborts the transport once when progress stops", "[watchdog]") {
  CountingTransport transport;
  Watchdog watchdog(transport, 0.1);
  watchdog.progress(7);
  // Generous: the limit is 0.1 s, and up to 20 s are allowed for it to notice.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!watchdog.fired() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(watchdog.fired());
  CHECK(watchdog.op_waited_on() == 7);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(transport.aborts == 1);
}

TEST_CASE("the watchdog stays quiet while progress comes", "[watchdog]") {
  CountingTransport transport;
  {
    // A 30 s limit against progress every 10 ms for half a second: far from firing.
    Watchdog watchdog(transport, 30);
    for (uint32_t op = 0; op < 50; ++op) {
      watchdog.progress(op);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK_FALSE(watchdog.fired());
  }  // and it stops promptly when the run ends
  CHECK(transport.aborts == 0);
}
