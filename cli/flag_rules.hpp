#pragma once
// Flags that mean nothing in the command as typed are refused (UserError, exit 2, naming the
// flag), never ignored: the rules are the scenario library's (scenario/field_rules.hpp, which
// the Python module applies too); this reads which flags CLI11 saw. The values themselves are
// checked where they are parsed (scenario/scenario.hpp).
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "problem_flags.hpp"

namespace tessera::cli {

// `command` is the parsed subcommand; `problem` its problem flags (for the mask).
void refuse_meaningless_flags(const CLI::App& command, const ProblemFlags& problem, const CommonFlags& common);

}  // namespace tessera::cli
