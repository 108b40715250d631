#include "tessera/plot/chart.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "tessera/core/error.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::plot {

namespace {

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  try {
    size_t used = 0;
    value = std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Category labels: token counts read as 512K, 1M.
std::string category_label(const std::string& column, const std::string& value) {
  double number = 0;
  // Only counts an int64 holds are shortened (a hand-edited cell of 1e308 or inf stays as written).
  if (ends_with(column, "_tokens") && parse_number(value, number) && number >= 1024 && number < 9.2e18)
    return format_count(static_cast<int64_t>(number));
  return value;
}

// Distinct values in order of first appearance, or numerically when all are numbers.
std::vector<std::string> categories(const std::vector<std::string>& values) {
  std::vector<std::string> distinct;
  std::set<std::string> seen;
  for (const std::string& value : values)
    if (seen.insert(value).second) distinct.push_back(value);
  double a = 0, b = 0;
  const bool numeric = std::all_of(distinct.begin(), distinct.end(), [&](const std::string& v) { return parse_number(v, a); });
  if (numeric)
    std::stable_sort(distinct.begin(), distinct.end(), [&](const std::string& x, const std::string& y) {
      parse_number(x, a);
      parse_number(y, b);
      return a < b;
    });
  return distinct;
}

struct Accumulator {
  double value = 0;
  size_t count = 0;
  void add(double v, const std::string& how) {
    if (count == 0) {
      value = v;
    } else if (how == "min") {
      value = std::min(value, v);
    } else if (how == "max") {
      value = std::max(value, v);
    } else {
      value += v;
    }
    ++count;
  }
  double result(const std::string& how) const { return how == "mean" ? value / static_cast<double>(count) : value; }
};

bool truthy(const std::string& key, const std::string& value) {
  if (value == "true" || value == "yes" || value == "on" || value == "1") return true;
  if (value == "false" || value == "no" || value == "off" || value == "0") return false;
  throw UserError(key + ": '" + value + "' is not true or false");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_where(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> terms;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    size_t stop = text.find(',', start);
    if (stop == std::string::npos) stop = text.size();
    const std::string term = text.substr(start, stop - start);
    const size_t equals = term.find('=');
    if (equals == std::string::npos || equals == 0)
      throw UserError("where: '" + term + "' is not COLUMN=VALUE (e.g. mask=causal,kv_heads=32)");
    terms.emplace_back(term.substr(0, equals), term.substr(equals + 1));
    start = stop + 1;
  }
  return terms;
}

PlotRequest request_from_options(const std::map<std::string, std::string>& options) {
  PlotRequest request;
  auto get = [&](const char* key) -> std::string {
    auto it = options.find(key);
    return it == options.end() ? std::string() : it->second;
  };
  try {
    if (!get("kind").empty()) request.kind = parse_kind(get("kind"));
  } catch (const UserError& error) {
    throw UserError(std::string("kind: ") + error.what());
  }
  request.x = get("x");
  request.y = get("y");
  request.series = get("series");
  request.value = get("value");
  request.title = get("title");
  request.x_label = get("xlabel");
  request.y_label = get("ylabel");
  if (!get("where").empty()) request.where = parse_where(get("where"));
  if (!get("logx").empty()) request.log_x = truthy("logx", get("logx")) ? 1 : 0;
  if (!get("logy").empty()) request.log_y = truthy("logy", get("logy"));
  if (!get("aggregate").empty()) request.aggregate = get("aggregate");
  if (request.aggregate != "min" && request.aggregate != "max" && request.aggregate != "mean")
    throw UserError("aggregate: '" + request.aggregate + "' is not one of min, max, mean");
  if (request.x.empty()) throw UserError("x: a column is required (e.g. gpus)");
  if (request.y.empty()) throw UserError("y: a column is required (e.g. time_s)");
  if ((request.kind == FigureKind::heatmap || request.kind == FigureKind::winner) && request.value.empty())
    throw UserError("value: a " + to_string(request.kind) + " needs the column to colour by (e.g. time_s)");
  if (request.kind == FigureKind::winner && request.series.empty())
    throw UserError("series: a winner map needs the column of the contenders (e.g. algo)");
  return request;
}

// The unit ticks carry: seconds and bytes get SI prefixes in front of them.
std::string unit_for(const std::string& column) {
  if (ends_with(column, "_s")) return "s";
  if (ends_with(column, "_bytes") || column.find("_bytes_") != std::string::npos) return "B";
  return "";
}

std::string label_for(const std::string& column) {
  static const std::map<std::string, std::string> known = {
      {"gpus", "GPUs"},
      {"seq_tokens", "sequence length (tokens)"},
      {"time_s", "time (s)"},
      {"analytic_time_s", "analytic time, alpha-beta model (s)"},
      {"simulated_time_s", "simulated time (s)"},
      {"recv_bytes_max", "bytes received, busiest GPU (bytes)"},
      {"recv_bytes_mean", "bytes received, mean per GPU (bytes)"},
      {"peak_memory_bytes_max", "peak buffer memory, busiest GPU (bytes)"},
      {"flops_max", "FLOPs, busiest GPU"},
      {"comm_over_compute", "communication / compute time"},
      {"kv_heads", "KV heads"},
      {"tile", "tile shape (a x b)"},
      {"algo", "schedule"},
  };
  if (auto it = known.find(column); it != known.end()) return it->second;
  std::string name = column, unit;
  for (const auto& [suffix, text] : std::vector<std::pair<std::string, std::string>>{
           {"_s", "s"}, {"_bytes", "bytes"}, {"_tokens", "tokens"}, {"_gbps", "GB/s"}, {"_us", "µs"}, {"_pct", "%"}}) {
    if (ends_with(name, suffix)) {
      name = name.substr(0, name.size() - suffix.size());
      unit = text;
      break;
    }
  }
  if (unit.empty() && name.find("_bytes_") != std::string::npos) unit = "bytes";
  std::replace(name.begin(), name.end(), '_', ' ');
  return unit.empty() ? name : name + " (" + unit + ")";
}

namespace {

// The number in a cell that must hold one; an empty cell (a metric the row's model does not
// give) is skipped, anything else is refused with the file's line.
bool plotted_number(const sweep::Table& table, const std::vector<std::string>& row, size_t column, double& value) {
  const std::string& cell = row[column];
  if (cell.empty()) return false;
  if (parse_number(cell, value)) return true;
  const auto position = static_cast<size_t>(&row - table.rows.data());
  const std::string line = position < table.lines.size() ? ":" + std::to_string(table.lines[position]) : "";
  throw UserError(table.source + line + ": " + table.columns[column] + ": " + tessera::quoted(cell) +
                  " is not a number (the column plotted as a value must hold numbers)");
}

}  // namespace

Figure make_figure(const sweep::Table& table, const PlotRequest& request) {
  Figure figure;
  figure.kind = request.kind;
  const size_t x = table.column(request.x), y = table.column(request.y);
  const bool has_series = !request.series.empty();
  const size_t series = has_series ? table.column(request.series) : 0;
  const bool has_value = !request.value.empty();
  const size_t value = has_value ? table.column(request.value) : 0;
  std::vector<std::pair<size_t, std::string>> where;
  for (const auto& [column, wanted] : request.where) where.emplace_back(table.column(column), wanted);
  size_t status = table.columns.size();
  for (size_t index = 0; index < table.columns.size(); ++index)
    if (table.columns[index] == "status") status = index;

  std::vector<const std::vector<std::string>*> rows;
  for (const auto& row : table.rows) {
    if (status < row.size() && row[status] != "ok") continue;
    bool keep = true;
    for (const auto& [column, wanted] : where) keep = keep && row[column] == wanted;
    if (keep) rows.push_back(&row);
  }
  if (rows.empty())
    throw UserError(table.source + ": no rows with status ok" + (where.empty() ? "" : " match the where filter") +
                    ": nothing to plot");

  const std::string& how = request.aggregate;
  std::string subtitle;
  for (const auto& [column, wanted] : request.where) subtitle += (subtitle.empty() ? "" : ", ") + column + " = " + wanted;
  bool combined = false;

  std::vector<std::string> series_values;
  for (const auto* row : rows) series_values.push_back(has_series ? (*row)[series] : "");
  std::vector<std::string> series_names;
  {
    std::set<std::string> seen;
    for (const auto& name : series_values)
      if (seen.insert(name).second) series_names.push_back(name);
  }

  figure.title = request.title;
  figure.x_label = request.x_label.empty() ? label_for(request.x) : request.x_label;
  figure.y_label = request.y_label.empty() ? label_for(request.y) : request.y_label;
  figure.log10_y = request.log_y;
  if (request.kind == FigureKind::line || request.kind == FigureKind::bar) figure.y_unit = unit_for(request.y);
  figure.value_unit = request.kind == FigureKind::heatmap ? unit_for(request.value) : "";

  if (request.kind == FigureKind::line || request.kind == FigureKind::bar) {
    const bool line = request.kind == FigureKind::line;
    figure.log2_x = line && (request.log_x == 1 || (request.log_x == -1 && (request.x == "gpus" || request.x == "seq_tokens")));
    std::vector<std::string> x_values;
    for (const auto* row : rows) x_values.push_back((*row)[x]);
    std::vector<std::string> x_categories = categories(x_values);
    if (!line)
      for (const auto& category : x_categories) figure.x_categories.push_back(category_label(request.x, category));
    for (const std::string& name : series_names) {
      std::map<std::string, Accumulator> points;  // by x text
      for (size_t k = 0; k < rows.size(); ++k) {
        if (series_values[k] != name) continue;
        double v = 0;
        if (!plotted_number(table, *rows[k], y, v)) continue;
        auto& accumulator = points[(*rows[k])[x]];
        accumulator.add(v, how);
        combined = combined || accumulator.count > 1;
      }
      Series out;
      out.name = name;
      for (size_t c = 0; c < x_categories.size(); ++c) {
        auto it = points.find(x_categories[c]);
        if (it == points.end()) continue;
        double xv = static_cast<double>(c);
        if (line && !parse_number(x_categories[c], xv))
          throw UserError(table.source + ": column '" + request.x + "' holds '" + x_categories[c] +
                          "', not a number (a line plot needs a numeric x; try --kind bar)");
        out.x.push_back(xv);
        out.y.push_back(it->second.result(how));
      }
      figure.series.push_back(std::move(out));
    }
  } else {
    std::vector<std::string> x_values, y_values;
    for (const auto* row : rows) {
      x_values.push_back((*row)[x]);
      y_values.push_back((*row)[y]);
    }
    const std::vector<std::string> columns = categories(x_values), lines = categories(y_values);
    for (const auto& category : columns) figure.x_categories.push_back(category_label(request.x, category));
    for (const auto& category : lines) figure.y_categories.push_back(category_label(request.y, category));
    figure.value_label = label_for(request.value);
    std::map<std::pair<std::string, std::string>, std::map<std::string, Accumulator>> cells;  // (x, y) -> series
    for (size_t k = 0; k < rows.size(); ++k) {
      double v = 0;
      if (!plotted_number(table, *rows[k], value, v)) continue;
      auto& accumulator = cells[{(*rows[k])[x], (*rows[k])[y]}][series_values[k]];
      accumulator.add(v, how);
      combined = combined || accumulator.count > 1;
    }
    figure.cells.assign(lines.size(), std::vector<double>(columns.size(), kMissing));
    figure.winners.assign(lines.size(), std::vector<int>(columns.size(), -1));
    std::map<std::string, int> legend;
    if (request.kind == FigureKind::winner)
      for (const std::string& name : series_names) {
        legend.emplace(name, static_cast<int>(legend.size()));
        figure.legend.push_back(name);
      }
    for (size_t r = 0; r < lines.size(); ++r)
      for (size_t c = 0; c < columns.size(); ++c) {
        auto it = cells.find({columns[c], lines[r]});
        if (it == cells.end()) continue;
        if (request.kind == FigureKind::heatmap) {
          Accumulator all;
          for (const auto& [name, accumulator] : it->second) all.add(accumulator.result(how), how);
          figure.cells[r][c] = all.result(how);
          continue;
        }
        // Winner: the smallest value; margin = runner-up / winner. Every contender keeps its
        // colour (its position in the series order), so maps of the same sweep compare.
        std::vector<std::pair<double, std::string>> ranked;
        for (const std::string& name : series_names)
          if (auto found = it->second.find(name); found != it->second.end())
            ranked.emplace_back(found->second.result(how), name);
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        figure.winners[r][c] = legend.at(ranked.front().second);
        if (ranked.size() > 1 && ranked.front().first > 0) figure.cells[r][c] = ranked[1].first / ranked.front().first;
      }
    if (request.kind == FigureKind::winner) figure.value_label = "cell: runner-up / winner " + label_for(request.value);
  }
  if (combined) subtitle += std::string(subtitle.empty() ? "" : "; ") + how + " over rows sharing a point";
  figure.subtitle = subtitle;
  if (request.kind == FigureKind::winner)
    figure.note = "colour: lowest " + request.value + " among " + request.series + "; number: runner-up / winner";
  return figure;
}

}  // namespace tessera::plot
