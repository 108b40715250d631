#pragma once
// What the user set up in the window: the scenario as text (the same fields as the command
// line) plus the simulation and view choices. Saved as a versioned JSON file:
//
//   {"format": "tessera-gui-session", "version": 1,
//    "problem":  {"gpus": "64", "seq": "128K", "heads": "32", ...},
//    "schedule": {"algorithm": "mesh", "tile": "", "variant": ""},
//    "network":  {"topology": "h100-ib:8", "placement": "auto"},
//    "simulation": {"fidelity": "flow", "gpu": "h100"},
//    "view": "matrix", "selected_gpu": -1,
//    "sweep": {"file": "results.csv", "x": "gpus", "y": "time_s", "series": "algo", "log_x": false,
//              "log_y": false}}
//
// The sweep file (for the Compare view's line charts) is written relative to the session
// file's folder and read back against it.
//
// Every section and field is optional (missing ones keep their defaults); a field of the wrong
// type, an unknown field or a wrong format/version is an error that names the field.
#include <QString>

#include "tessera/scenario/scenario.hpp"
#include "tessera/core/hardware_presets.hpp"

namespace tessera::gui {

// The sweep results file shown in the Compare view, and how it is plotted.
struct SweepChoice {
  std::string file;  // empty: none
  std::string x, y, series;
  bool log_x = false;
  bool log_y = false;
};

struct Session {
  scenario::ProblemText problem;
  scenario::ScheduleText schedule;
  scenario::NetworkText network;
  std::string fidelity = "flow";  // flow | alpha-beta (sim::parse_fidelity)
  std::string gpu{kDefaultGpu.name};       // sim::gpu_profile name
  std::string view = "matrix";    // matrix | network | timeline | compare
  int selected_gpu = -1;          // highlighted in every view; -1: none
  SweepChoice sweep;
};

// The scenario the window opens with: small enough to simulate in about a second.
Session default_session();

inline constexpr int kSessionVersion = 1;

// Throws UserError: "<path>: <field>: <what was expected>".
Session read_session(const QString& path);
// `base_dir`: where a relative sweep file is looked for (and made relative to when written).
Session parse_session(const QByteArray& json, const QString& source_name, const QString& base_dir = QString());
QByteArray session_to_json(const Session& session, const QString& base_dir = QString());
void write_session(const QString& path, const Session& session);  // UserError when it cannot write

bool is_view_name(const std::string& view);

}  // namespace tessera::gui
