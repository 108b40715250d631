#pragma once
// What every fuzz target shares: the outcome rule, a small memory limit, and a scratch file
// for the parsers that only read a path.
//
// The rule (issue 17's contract): for any input, a parser returns or throws tessera::UserError.
// Any other exception, a crash, a sanitizer report, a timeout or running out of memory is a
// finding. An escaping exception is reported here with its type and message, then abort() makes
// libFuzzer save the input, so the report says what was thrown rather than only "deadly signal".
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "tessera/core/error.hpp"

namespace tessera::fuzz {

// Parsers that go on to build big objects (a topology, a schedule, a sweep's points) must refuse
// them with an estimate before allocating (core/resource_limits.hpp). A limit far under
// -rss_limit_mb makes that refusal the outcome instead of an out-of-memory finding.
// An explicit TESSERA_MEMORY_LIMIT in the environment is kept.
inline void limit_memory() { ::setenv("TESSERA_MEMORY_LIMIT", "256MB", 0); }

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A per-process file in memory (/dev/shm where it exists, else /tmp; libFuzzer's -fork and -jobs
// run several processes at once), removed when the process exits normally.
class ScratchFile {
  static std::string scratch_folder() {
    struct stat info {};
    return ::stat("/dev/shm", &info) == 0 && S_ISDIR(info.st_mode) ? "/dev/shm" : "/tmp";
  }

 public:
  explicit ScratchFile(const std::string& name)
      : path_(scratch_folder() + "/tessera-fuzz-" + std::to_string(::getpid()) + "-" + name) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }
  const std::string& write(std::string_view content) const {
    // A new file each time, not the old one truncated: ext4 (auto_da_alloc) flushes a file
    // truncated and rewritten to disk on close, which made each input cost milliseconds.
    std::remove(path_.c_str());
    std::ofstream file(path_, std::ios::binary | std::ios::trunc);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    return path_;
  }

 private:
  std::string path_;
};

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\nFINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `parse`: UserError is the expected refusal of bad input; anything else is a finding.
template <typename Parse>
int expect_user_errors_only(Parse&& parse) {
  try {
    parse();
  } catch (const UserError&) {
    return 0;
  } catch (const std::exception& error) {
    finding(std::string("exception other than UserError: ") + typeid(error).name() + ": " + error.what());
  } catch (...) {
    finding("exception that is not a std::exception");
  }
  return 0;
}

}  // namespace tessera::fuzz
