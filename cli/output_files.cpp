#include "output_files.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera::cli {

namespace {

void require_writable(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || path == "-") return;  // standard output
  std::error_code error;
  if (fs::is_directory(path, error))
    throw UserError(flag + ": " + tessera::quoted(path) + " is a folder; expected a file name");
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(folder, error))
    throw UserError(flag + ": " + tessera::quoted(path) + ": the folder " + tessera::quoted(folder.string()) +
                    " does not exist");
  // An existing file must be writable; a new one needs a writable folder.
  const bool exists = fs::exists(path, error);
  if (access(exists ? path.c_str() : folder.c_str(), W_OK) != 0)
    throw UserError(flag + ": " + tessera::quoted(path) + ": cannot write " +
                    (exists ? "the file" : "in the folder " + tessera::quoted(folder.string())));
}

}  // namespace

void require_writable_outputs(const CLI::App& command) {
  // sweep's --out is a results folder, which the sweep itself checks.
  const bool plot = command.get_name() == "plot";
  for (const char* flag : {"--output", "--trace", "--ops-csv", "--links-csv", "--out"}) {
    if (std::string(flag) == "--out" && !plot) continue;
    const CLI::Option* option = command.get_option_no_throw(flag);
    if (option == nullptr || option->count() == 0) continue;
    require_writable(flag, option->as<std::string>());
  }
}

}  // namespace tessera::cli
