#pragma once
// Flags that mean nothing in the command as typed are refused (UserError, exit 2, naming the
// flag), never ignored: `--links-csv` with `--collective`, `--gpu` with `--calibration`,
// `--bandwidth` with `--topology` (whose links have their own), `--window` without a
// sliding-window mask, and so on. The values themselves are checked where they are parsed
// (scenario/scenario.hpp); this is only about which flags go together.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "problem_flags.hpp"

namespace tessera::cli {

// `command` is the parsed subcommand; `problem` its problem flags (for the mask).
void refuse_meaningless_flags(const CLI::App& command, const ProblemFlags& problem, const CommonFlags& common);

}  // namespace tessera::cli
