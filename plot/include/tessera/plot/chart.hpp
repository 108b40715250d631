#pragma once
// From a results table (tessera sweep's results.csv) to a figure: pick the x, y (and series,
// value) columns, keep the rows with status ok that match the `where` filters, and combine rows
// that land on the same point (aggregate: min by default, e.g. the best tile shape of each
// schedule).
#include <map>
#include <string>
#include <vector>

#include "tessera/plot/figure.hpp"
#include "tessera/sweep/results.hpp"

namespace tessera::plot {

struct PlotRequest {
  FigureKind kind = FigureKind::line;
  std::string x, y, series, value;
  std::vector<std::pair<std::string, std::string>> where;  // column = value
  std::string title, x_label, y_label;
  int log_x = -1;  // -1: automatic (log2 for gpus and seq_tokens on line plots)
  bool log_y = false;
  std::string aggregate = "min";  // min, max, mean
};

// The keys of a spec's `figures` entry or the flags of `tessera plot` (name and format are the
// caller's). UserError naming the key.
PlotRequest request_from_options(const std::map<std::string, std::string>& options);
// "gpus=64,mask=causal" -> pairs; UserError on a bad term.
std::vector<std::pair<std::string, std::string>> parse_where(const std::string& text);

// "time_s" -> "time (s)", "recv_bytes_max" -> "received bytes, busiest GPU (bytes)", ...
std::string label_for(const std::string& column);

Figure make_figure(const sweep::Table& table, const PlotRequest& request);

}  // namespace tessera::plot
