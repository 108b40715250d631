// Main of the GPU suite: without a usable GPU it reports itself skipped (exit code 77, which
// ctest shows as "Skipped", never as passed) and runs nothing.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "tessera/backend/factory/make_executor.hpp"

int main(int argc, char** argv) {
  try {
    tessera::backend::make_executor("cuda", {});
  } catch (const tessera::backend::BackendUnavailable& error) {
    std::cout << "SKIPPED: " << error.what() << "\n";
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
