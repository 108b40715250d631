#pragma once
// Fields that mean nothing in the request as made are refused (UserError naming the field in its
// command-line spelling, `--bandwidth: ...`), never ignored: `--links-csv` with `--collective`,
// `--gpu` with `--calibration`, `--bandwidth` with `--topology` (whose links have their own),
// `--window` without a sliding-window mask, and so on. One set of rules for every front end
// that takes the command line's fields: the command line (cli/flag_rules.hpp, from CLI11's
// parse) and the Python module (its keyword arguments). The values themselves are checked
// where they are parsed (scenario.hpp); this is only about which fields go together.
#include <functional>
#include <string>

namespace tessera::scenario {

struct FieldRequest {
  std::string command;  // the subcommand: cost, plan, simulate, schedule, check, run, validate, calibrate
  // Whether a field was given, by its flag ("--topology"); a field the command does not have is never given.
  std::function<bool(const char* flag)> given;
  // The text given for a flag ("" when not given): read for --algo, --mask and --backend.
  std::function<std::string(const char* flag)> value;
  bool json = false;         // --json (check prices a schedule only then; --per-gpu needs it)
  std::string model = "flow";  // plan: --model
};

void refuse_meaningless_fields(const FieldRequest& request);

}  // namespace tessera::scenario
