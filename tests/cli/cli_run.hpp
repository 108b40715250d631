#pragma once
// Running the `tessera` binary from a test: its exit code, standard output and standard error.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/scratch.hpp"

namespace cli_test {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Runs in the scratch folder: the files the arguments name are read and written there.
// `arguments` goes through the shell, so quote what needs it.
inline Run tessera(const std::string& arguments) {
  using test_support::scratch_path;
  const std::string out_path = scratch_path("cli_test_stdout.txt"), err_path = scratch_path("cli_test_stderr.txt");
  const std::string folder = std::filesystem::path(out_path).parent_path().string();
  std::string command =
      "cd '" + folder + "' && " + std::string(TESSERA_CLI) + " " + arguments + " >" + out_path + " 2>" + err_path;
  int status = std::system(command.c_str());
  Run run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  return run;
}

inline int lines(const std::string& text) {
  int count = 0;
  for (char c : text) count += c == '\n';
  return count;
}

}  // namespace cli_test
