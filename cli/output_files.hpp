#pragma once
// Files a command will write, checked before any work: a run of minutes must not end in
// "cannot write the file" when the folder was missing from the start.
#include <CLI/CLI.hpp>

namespace tessera::cli {

// For each output-file flag `command` was given (--output, --trace, --ops-csv, --links-csv; plot's
// --out), refuses a path that is a directory, or whose folder does not exist or cannot be written:
// "--trace: /proc/nope/t.json: the folder /proc/nope does not exist".
void require_writable_outputs(const CLI::App& command);

}  // namespace tessera::cli
