#pragma once
// A figure model in plain C++ and its SVG writer (text, no dependencies). Four kinds:
//  - line:    y against x, one line per series (log2 x is natural for GPU counts);
//  - bar:     grouped bars, one group per x category, one bar per series;
//  - heatmap: a value per (x category, y category) cell, coloured and printed in the cell;
//  - winner:  per cell, the series with the smallest value ("which schedule when"), coloured
//             by winner, with its margin over the runner-up.
// Labels carry their units ("time (s)"); ticks use SI prefixes (1 G = 1e9).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tessera::plot {

enum class FigureKind { line, bar, heatmap, winner };
FigureKind parse_kind(const std::string& text);  // UserError
std::string to_string(FigureKind kind);

struct Series {
  std::string name;
  std::vector<double> x, y;  // line: points; bar: x = category index
};

inline constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

struct Figure {
  FigureKind kind = FigureKind::line;
  std::string title;
  std::string subtitle;  // one line under the title (filters, fixed values)
  std::string x_label, y_label, value_label;
  std::string y_unit, value_unit;  // appended to tick labels: "30 ms", "800 MB"
  bool log2_x = false;
  bool log10_y = false;
  std::vector<Series> series;                // line, bar
  std::vector<std::string> x_categories;     // bar, heatmap, winner: columns
  std::vector<std::string> y_categories;     // heatmap, winner: rows (bottom to top)
  std::vector<std::vector<double>> cells;    // heatmap: [row][column]; winner: margin (runner-up / best)
  std::vector<std::vector<int>> winners;     // winner: index into `legend`, -1 = none
  std::vector<std::string> legend;           // winner: the contenders
  std::string note;                          // a footnote
};

std::string render_svg(const Figure& figure, int width = 860, int height = 520);

// "1.5 G", "250 m", "12": SI prefixes from n to P.
std::string si_format(double value);

}  // namespace tessera::plot
