#pragma once
// Where tests write their files: a folder in the build tree (TESSERA_TEST_SCRATCH, which
// tests/CMakeLists.txt sets for every suite), never the directory a test runs from, so that
// running a suite from the repository root leaves nothing there.
#include <filesystem>
#include <string>

namespace test_support {  // not tessera::, so cli_test can keep its function named tessera

// The path of `name` in the scratch folder, which exists once this returns.
inline std::string scratch_path(const std::string& name) {
  const std::filesystem::path folder(TESSERA_TEST_SCRATCH);
  std::filesystem::create_directories(folder);
  return (folder / name).string();
}

}  // namespace test_support
