#pragma once
// `tessera plot RESULTS --x gpus --y time_s --series algo`: a figure from a results table.
#include <map>
#include <string>
#include <vector>

#include "tessera/plot/figure.hpp"

namespace tessera::cli {

struct PlotFlags {
  std::string results;
  std::string out;
  std::string kind = "line";
  std::string x, y, series, value, where, title, xlabel, ylabel, aggregate = "min", format;
  bool logx = false, linear_x = false, logy = false;
};

int run_plot(const PlotFlags& flags);

// Writes `figure` to `path` as svg or png ("" = from the extension); the files written.
std::string write_figure(const plot::Figure& figure, const std::string& path, const std::string& format);
bool png_available();

}  // namespace tessera::cli
