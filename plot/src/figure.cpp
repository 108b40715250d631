// The SVG writer. Only elements and attributes of SVG Tiny 1.2 (what Qt's renderer draws):
// rect, line, polyline, circle, text with text-anchor, rotate transforms; colours as
// attributes. Colours: the Okabe-Ito palette (colour-blind safe) and a viridis-like ramp.
#include "tessera/plot/figure.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::plot {

namespace {

const std::array<const char*, 8> kPalette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                             "#E69F00", "#56B4E9", "#000000", "#999999"};
const std::array<const char*, 4> kDashes = {"", "6,3", "2,3", "8,3,2,3"};
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

struct Svg {
  std::ostringstream out;
  void text(double x, double y, const std::string& content, double size, const std::string& anchor = "start",
            const std::string& fill = "#222222", const std::string& extra = "") {
    out << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-family=\"" << kFont << "\" font-size=\""
        << num(size) << "\" text-anchor=\"" << anchor << "\" fill=\"" << fill << "\"" << extra << ">"
        << escape(content) << "</text>\n";
  }
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
            const std::string& dash = "") {
    out << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
        << "\" stroke=\"" << stroke << "\" stroke-width=\"" << num(width) << "\"";
    if (!dash.empty()) out << " stroke-dasharray=\"" << dash << "\"";
    out << "/>\n";
  }
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& stroke = "none") {
    out << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h)
        << "\" fill=\"" << fill << "\" stroke=\"" << stroke << "\"/>\n";
  }
};

struct Frame {
  double left, top, right, bottom;
  double width() const { return right - left; }
  double height() const { return bottom - top; }
};

// 1, 2, 5 x 10^k ticks covering [low, high].
std::vector<double> nice_ticks(double low, double high, int target = 6) {
  if (!(high > low)) return {low};
  const double raw = (high - low) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (magnitude * factor >= raw) {
      step = magnitude * factor;
      break;
    }
  std::vector<double> ticks;
  high = std::ceil(high / step - 1e-9) * step;  // the last tick at or above the data
  for (double tick = std::ceil(low / step - 1e-9) * step; tick <= high + step * 1e-9; tick += step)
    ticks.push_back(std::abs(tick) < step * 1e-9 ? 0.0 : tick);
  return ticks;
}

std::array<double, 3> ramp(double t) {  // viridis-like, t in [0, 1]
  static const std::array<std::array<double, 3>, 5> stops = {
      {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
  if (!(t >= 0)) t = 0;  // NaN (a cell with no value, or a range of one value) takes the first colour
  t = std::clamp(t, 0.0, 1.0) * 4;
  const auto index = std::min<size_t>(3, static_cast<size_t>(t));
  const double f = t - static_cast<double>(index);
  std::array<double, 3> rgb{};
  for (size_t c = 0; c < 3; ++c) rgb[c] = stops[index][c] * (1 - f) + stops[index + 1][c] * f;
  return rgb;
}
std::string hex(const std::array<double, 3>& rgb) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02X%02X%02X", static_cast<int>(rgb[0]), static_cast<int>(rgb[1]),
                static_cast<int>(rgb[2]));
  return buffer;
}
bool dark(const std::string& colour) {
  unsigned r = 0, g = 0, b = 0;
  std::sscanf(colour.c_str(), "#%02x%02x%02x", &r, &g, &b);
  return 0.299 * r + 0.587 * g + 0.114 * b < 140;
}

void titles(Svg& svg, const Figure& figure, int width, int height, const Frame& frame) {
  // Long titles shrink to fit (bold DejaVu Sans is about 0.62 em per character).
  const double title_size =
      std::clamp((width - 24.0) / (0.62 * static_cast<double>(std::max<size_t>(figure.title.size(), 1))), 11.0, 17.0);
  svg.text(width / 2.0, 26, figure.title, title_size, "middle", "#111111", " font-weight=\"bold\"");
  if (!figure.subtitle.empty()) svg.text(width / 2.0, 44, figure.subtitle, 11.5, "middle", "#555555");
  svg.text((frame.left + frame.right) / 2, height - 16, figure.x_label, 13, "middle");
  const double y = (frame.top + frame.bottom) / 2;
  svg.text(20, y, figure.y_label, 13, "middle", "#222222",
           " transform=\"rotate(-90 20 " + num(y) + ")\"");
  if (!figure.note.empty()) svg.text(width - 8, height - 4, figure.note, 9.5, "end", "#777777");
}

void legend_entries(Svg& svg, const std::vector<std::string>& names, double x, double y, bool boxes) {
  for (size_t index = 0; index < names.size(); ++index) {
    const double row = y + 20.0 * static_cast<double>(index);
    const std::string colour = kPalette[index % kPalette.size()];
    if (boxes) {
      svg.rect(x, row - 10, 18, 12, colour);
    } else {
      svg.line(x, row - 4, x + 22, row - 4, colour, 2.2, kDashes[(index / kPalette.size()) % kDashes.size()]);
      svg.out << "<circle cx=\"" << num(x + 11) << "\" cy=\"" << num(row - 4) << "\" r=\"3.5\" fill=\"" << colour
              << "\"/>\n";
    }
    svg.text(x + 28, row, names[index], 12);
  }
}

// Numeric axes for line plots (and bars' y).
struct Scale {
  double low = 0, high = 1;
  bool log = false;
  double base = 10;
  double transform(double value) const { return log ? std::log(value) / std::log(base) : value; }
};

Scale fit_scale(std::vector<double> values, bool log, double base, bool from_zero) {
  Scale scale;
  scale.log = log;
  scale.base = base;
  values.erase(std::remove_if(values.begin(), values.end(),
                              [&](double v) { return !std::isfinite(v) || (log && v <= 0); }),
               values.end());
  if (values.empty()) return scale;
  double low = *std::min_element(values.begin(), values.end());
  double high = *std::max_element(values.begin(), values.end());
  if (log) {
    scale.low = std::floor(scale.transform(low) + 1e-9);
    scale.high = std::ceil(scale.transform(high) - 1e-9);
    if (scale.high <= scale.low) scale.high = scale.low + 1;
    return scale;
  }
  if (from_zero) low = std::min(low, 0.0), high = std::max(high, 0.0);
  if (high <= low) {
    high = low + (low == 0 ? 1 : std::abs(low) * 0.5);
    if (!from_zero) low -= high - low;
  }
  const std::vector<double> ticks = nice_ticks(low, high);
  scale.low = std::min(low, ticks.front());
  scale.high = std::max(high, ticks.back());
  return scale;
}

std::vector<double> scale_ticks(const Scale& scale) {
  std::vector<double> ticks;
  if (scale.log) {
    const int span = static_cast<int>(scale.high - scale.low);
    const int step = std::max(1, (span + 9) / 10);
    for (int k = static_cast<int>(scale.low); k <= static_cast<int>(scale.high); k += step) {
      ticks.push_back(std::pow(scale.base, k));
      // Few decades: 2 and 5 times each decade as well.
      if (scale.base == 10 && span <= 3 && k < static_cast<int>(scale.high))
        for (double factor : {2.0, 5.0}) ticks.push_back(factor * std::pow(10.0, k));
    }
    std::sort(ticks.begin(), ticks.end());
    return ticks;
  }
  return nice_ticks(scale.low, scale.high);
}

std::string tick_label(double value, const Scale& scale) {
  if (scale.log && scale.base == 2 && value >= 1024 && std::fmod(value, 1024) == 0) {
    // Powers of two read best in binary units: 16K, 512K, 1M tokens.
    const bool mega = std::fmod(value, 1048576) == 0;
    return num(value / (mega ? 1048576 : 1024)) + (mega ? "M" : "K");
  }
  if (scale.log && scale.base == 2 && value >= 1 && value < 1e6) return num(value);
  return si_format(value);
}

std::string with_unit(const std::string& text, const std::string& unit) {
  if (unit.empty() || text == "n/a") return text;
  if (text == "0") return "0";
  return text.back() >= '0' && text.back() <= '9' ? text + " " + unit : text + unit;
}

void y_axis(Svg& svg, const Frame& frame, const Scale& scale, const std::string& unit) {
  auto to_y = [&](double v) {
    return frame.bottom - (scale.transform(v) - scale.low) / (scale.high - scale.low) * frame.height();
  };
  for (double tick : scale_ticks(scale)) {
    const double y = to_y(tick);
    if (y < frame.top - 0.5 || y > frame.bottom + 0.5) continue;
    svg.line(frame.left, y, frame.right, y, "#E4E4E4", 1);
    svg.line(frame.left - 5, y, frame.left, y, "#444444", 1);
    svg.text(frame.left - 8, y + 4, with_unit(tick_label(tick, scale), unit), 11, "end", "#333333");
  }
}

void render_line(Svg& svg, const Figure& figure, const Frame& frame) {
  std::vector<double> xs, ys;
  for (const Series& series : figure.series) {
    xs.insert(xs.end(), series.x.begin(), series.x.end());
    ys.insert(ys.end(), series.y.begin(), series.y.end());
  }
  Scale x_scale = fit_scale(xs, figure.log2_x, 2, false);
  if (!figure.log2_x && !xs.empty()) {  // x: the data's range, padded, not from zero
    const double low = *std::min_element(xs.begin(), xs.end()), high = *std::max_element(xs.begin(), xs.end());
    x_scale.low = low;
    x_scale.high = high > low ? high : low + 1;
  }
  const double pad = (x_scale.high - x_scale.low) * 0.04;
  x_scale.low -= pad;
  x_scale.high += pad;
  const Scale y_scale = fit_scale(ys, figure.log10_y, 10, true);
  auto to_x = [&](double v) {
    return frame.left + (x_scale.transform(v) - x_scale.low) / (x_scale.high - x_scale.low) * frame.width();
  };
  auto to_y = [&](double v) {
    return frame.bottom - (y_scale.transform(v) - y_scale.low) / (y_scale.high - y_scale.low) * frame.height();
  };
  y_axis(svg, frame, y_scale, figure.y_unit);
  std::vector<double> x_ticks;
  if (figure.log2_x) {
    // The data's own x values when few (GPU counts), else powers of two.
    std::vector<double> distinct = xs;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    x_ticks = distinct.size() <= 12 ? distinct : scale_ticks(x_scale);
  } else {
    x_ticks = nice_ticks(x_scale.low + pad, x_scale.high - pad);
  }
  for (double tick : x_ticks) {
    const double x = to_x(tick);
    if (x < frame.left - 0.5 || x > frame.right + 0.5) continue;
    svg.line(x, frame.top, x, frame.bottom, "#F0F0F0", 1);
    svg.line(x, frame.bottom, x, frame.bottom + 5, "#444444", 1);
    svg.text(x, frame.bottom + 19, figure.log2_x ? tick_label(tick, x_scale) : si_format(tick), 11, "middle", "#333333");
  }
  svg.line(frame.left, frame.bottom, frame.right, frame.bottom, "#444444", 1.2);
  svg.line(frame.left, frame.top, frame.left, frame.bottom, "#444444", 1.2);
  for (size_t index = 0; index < figure.series.size(); ++index) {
    const Series& series = figure.series[index];
    const std::string colour = kPalette[index % kPalette.size()];
    const std::string dash = kDashes[(index / kPalette.size()) % kDashes.size()];
    std::string points;
    std::vector<std::pair<double, double>> marks;
    for (size_t k = 0; k < series.x.size(); ++k) {
      if (!std::isfinite(series.y[k]) || (figure.log10_y && series.y[k] <= 0)) continue;
      marks.emplace_back(to_x(series.x[k]), to_y(series.y[k]));
      points += num(marks.back().first) + "," + num(marks.back().second) + " ";
    }
    svg.out << "<polyline points=\"" << points << "\" fill=\"none\" stroke=\"" << colour
            << "\" stroke-width=\"2.2\" stroke-linejoin=\"round\"";
    if (!dash.empty()) svg.out << " stroke-dasharray=\"" << dash << "\"";
    svg.out << "/>\n";
    for (const auto& [x, y] : marks)
      svg.out << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"3.5\" fill=\"" << colour << "\"/>\n";
  }
  std::vector<std::string> names;
  for (const Series& series : figure.series) names.push_back(series.name);
  if (names.size() > 1 || (names.size() == 1 && !names[0].empty())) legend_entries(svg, names, frame.right + 18, frame.top + 10, false);
}

void render_bar(Svg& svg, const Figure& figure, const Frame& frame) {
  std::vector<double> ys;
  for (const Series& series : figure.series) ys.insert(ys.end(), series.y.begin(), series.y.end());
  const Scale y_scale = fit_scale(ys, figure.log10_y, 10, true);
  auto to_y = [&](double v) {
    if (y_scale.log && v <= 0) return frame.bottom;
    return frame.bottom - (y_scale.transform(v) - y_scale.low) / (y_scale.high - y_scale.low) * frame.height();
  };
  y_axis(svg, frame, y_scale, figure.y_unit);
  const size_t groups = std::max<size_t>(1, figure.x_categories.size());
  const double group_width = frame.width() / static_cast<double>(groups);
  const double bar_width = group_width * 0.8 / static_cast<double>(std::max<size_t>(1, figure.series.size()));
  for (size_t group = 0; group < figure.x_categories.size(); ++group) {
    const double centre = frame.left + group_width * (static_cast<double>(group) + 0.5);
    svg.text(centre, frame.bottom + 19, figure.x_categories[group], 11, "middle", "#333333");
  }
  const double base = y_scale.log ? frame.bottom : to_y(0);
  for (size_t index = 0; index < figure.series.size(); ++index) {
    const Series& series = figure.series[index];
    for (size_t k = 0; k < series.x.size(); ++k) {
      if (!std::isfinite(series.y[k])) continue;
      const double x = frame.left + group_width * series.x[k] + group_width * 0.1 + bar_width * static_cast<double>(index);
      const double y = to_y(series.y[k]);
      svg.rect(x, std::min(y, base), bar_width * 0.92, std::abs(base - y), kPalette[index % kPalette.size()]);
    }
  }
  svg.line(frame.left, frame.bottom, frame.right, frame.bottom, "#444444", 1.2);
  svg.line(frame.left, frame.top, frame.left, frame.bottom, "#444444", 1.2);
  std::vector<std::string> names;
  for (const Series& series : figure.series) names.push_back(series.name);
  if (names.size() > 1 || (names.size() == 1 && !names[0].empty())) legend_entries(svg, names, frame.right + 18, frame.top + 10, true);
}

void grid_labels(Svg& svg, const Figure& figure, const Frame& frame, double cell_w, double cell_h) {
  for (size_t column = 0; column < figure.x_categories.size(); ++column)
    svg.text(frame.left + cell_w * (static_cast<double>(column) + 0.5), frame.bottom + 19, figure.x_categories[column], 11,
             "middle", "#333333");
  for (size_t row = 0; row < figure.y_categories.size(); ++row)
    svg.text(frame.left - 8, frame.bottom - cell_h * (static_cast<double>(row) + 0.5) + 4, figure.y_categories[row], 11,
             "end", "#333333");
}

void render_heatmap(Svg& svg, const Figure& figure, const Frame& frame) {
  const size_t columns = std::max<size_t>(1, figure.x_categories.size()), rows = std::max<size_t>(1, figure.y_categories.size());
  const double cell_w = frame.width() / static_cast<double>(columns), cell_h = frame.height() / static_cast<double>(rows);
  double low = INFINITY, high = -INFINITY;
  auto tone = [&](double v) { return figure.log10_y ? std::log10(v) : v; };
  for (const auto& row : figure.cells)
    for (double v : row)
      if (std::isfinite(v) && (!figure.log10_y || v > 0)) low = std::min(low, tone(v)), high = std::max(high, tone(v));
  if (!(high > low)) high = low + 1;
  for (size_t row = 0; row < figure.cells.size(); ++row)
    for (size_t column = 0; column < figure.cells[row].size(); ++column) {
      const double x = frame.left + cell_w * static_cast<double>(column);
      const double y = frame.bottom - cell_h * static_cast<double>(row + 1);
      const double v = figure.cells[row][column];
      if (!std::isfinite(v)) {
        svg.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "#F4F4F4");
        svg.text(x + cell_w / 2, y + cell_h / 2 + 4, "n/a", 10, "middle", "#AAAAAA");
        continue;
      }
      const std::string colour = hex(ramp((tone(v) - low) / (high - low)));
      svg.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, colour);
      if (cell_w > 34 && cell_h > 14)
        svg.text(x + cell_w / 2, y + cell_h / 2 + 4, with_unit(si_format(v), figure.value_unit), std::min(11.0, cell_w / 5.5), "middle",
                 dark(colour) ? "#FFFFFF" : "#111111");
    }
  grid_labels(svg, figure, frame, cell_w, cell_h);
  // Colour bar.
  const double bar_x = frame.right + 24, bar_h = frame.height() * 0.8;
  for (int step = 0; step < 40; ++step) {
    const double t = step / 39.0;
    svg.rect(bar_x, frame.top + bar_h * (1 - t) - bar_h / 40, 16, bar_h / 40 + 0.5, hex(ramp(t)));
  }
  auto value_at = [&](double t) { return figure.log10_y ? std::pow(10, low + t * (high - low)) : low + t * (high - low); };
  svg.text(bar_x + 22, frame.top + 8, with_unit(si_format(value_at(1)), figure.value_unit), 11);
  svg.text(bar_x + 22, frame.top + bar_h + 4, with_unit(si_format(value_at(0)), figure.value_unit), 11);
  svg.text(bar_x, frame.top + bar_h + 24, figure.value_label, 11);
}

void render_winner(Svg& svg, const Figure& figure, const Frame& frame) {
  const size_t columns = std::max<size_t>(1, figure.x_categories.size()), rows = std::max<size_t>(1, figure.y_categories.size());
  const double cell_w = frame.width() / static_cast<double>(columns), cell_h = frame.height() / static_cast<double>(rows);
  for (size_t row = 0; row < figure.winners.size(); ++row)
    for (size_t column = 0; column < figure.winners[row].size(); ++column) {
      const double x = frame.left + cell_w * static_cast<double>(column);
      const double y = frame.bottom - cell_h * static_cast<double>(row + 1);
      const int winner = figure.winners[row][column];
      if (winner < 0) {
        svg.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, "#F4F4F4");
        continue;
      }
      const std::string colour = kPalette[static_cast<size_t>(winner) % kPalette.size()];
      svg.rect(x + 1, y + 1, cell_w - 2, cell_h - 2, colour);
      const double margin = figure.cells.size() > row && figure.cells[row].size() > column ? figure.cells[row][column] : kMissing;
      if (cell_w > 40 && cell_h > 16 && std::isfinite(margin)) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2fx", margin);
        svg.text(x + cell_w / 2, y + cell_h / 2 + 4, text, std::min(11.0, cell_w / 5), "middle",
                 dark(colour) ? "#FFFFFF" : "#111111");
      }
    }
  grid_labels(svg, figure, frame, cell_w, cell_h);
  legend_entries(svg, figure.legend, frame.right + 18, frame.top + 10, true);
}

}  // namespace

FigureKind parse_kind(const std::string& text) {
  if (text == "line") return FigureKind::line;
  if (text == "bar") return FigureKind::bar;
  if (text == "heatmap") return FigureKind::heatmap;
  if (text == "winner") return FigureKind::winner;
  throw UserError("unknown figure kind '" + text + "' (expected line, bar, heatmap or winner)");
}

std::string to_string(FigureKind kind) {
  switch (kind) {
    case FigureKind::line: return "line";
    case FigureKind::bar: return "bar";
    case FigureKind::heatmap: return "heatmap";
    case FigureKind::winner: return "winner";
  }
  return "line";
}

std::string si_format(double value) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0";
  static const std::array<const char*, 11> prefixes = {"p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E"};
  int exponent = static_cast<int>(std::floor(std::log10(std::abs(value)) / 3));
  exponent = std::clamp(exponent, -4, 6);
  const double scaled = value / std::pow(1000.0, exponent);
  char buffer[32];
  const double magnitude = std::abs(scaled);
  std::snprintf(buffer, sizeof buffer, magnitude >= 100 ? "%.0f" : magnitude >= 10 ? "%.1f" : "%.2f", scaled);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  const std::string prefix = prefixes[static_cast<size_t>(exponent + 4)];
  return prefix.empty() ? text : text + " " + prefix;
}

std::string render_svg(const Figure& figure, int width, int height) {
  Svg svg;
  const bool legend = figure.kind == FigureKind::heatmap || figure.kind == FigureKind::winner || figure.series.size() > 1 ||
                      (figure.series.size() == 1 && !figure.series[0].name.empty());
  double legend_width = 0;
  if (legend) {
    size_t longest = 6;
    for (const Series& series : figure.series) longest = std::max(longest, series.name.size());
    for (const std::string& name : figure.legend) longest = std::max(longest, name.size());
    legend_width = std::min(260.0, 48 + 7.0 * static_cast<double>(longest));
    if (figure.kind == FigureKind::heatmap) legend_width = 110;
  }
  double left = 84;
  if (figure.kind == FigureKind::heatmap || figure.kind == FigureKind::winner) {
    size_t longest = 2;
    for (const std::string& name : figure.y_categories) longest = std::max(longest, name.size());
    left = std::max(84.0, 46 + 7.0 * static_cast<double>(longest));
  }
  const Frame frame{left, figure.subtitle.empty() ? 52.0 : 62.0, width - 24 - legend_width, height - 54.0};
  svg.out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.2\" baseProfile=\"tiny\" width=\"" << width
          << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height << "\">\n";
  svg.rect(0, 0, width, height, "#FFFFFF");
  titles(svg, figure, width, height, frame);
  switch (figure.kind) {
    case FigureKind::line: render_line(svg, figure, frame); break;
    case FigureKind::bar: render_bar(svg, figure, frame); break;
    case FigureKind::heatmap: render_heatmap(svg, figure, frame); break;
    case FigureKind::winner: render_winner(svg, figure, frame); break;
  }
  svg.out << "</svg>\n";
  return svg.out.str();
}

}  // namespace tessera::plot
