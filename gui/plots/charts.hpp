#pragma once
// The one place that talks to Qt Charts (deprecated from Qt 6.10 in favour of Qt Graphs):
// the views describe a chart as plain data and get a widget back, so a move to another
// plotting library touches this file only.
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

#include "models/sweep_table.hpp"

namespace tessera::gui {

struct BarChartSpec {
  QString title;
  QString value_axis;          // "time (ms)"
  QStringList categories;      // one bar per category
  std::vector<double> values;
  int highlighted = -1;        // drawn in another colour (the current schedule)
  bool show_categories = true; // false: charts beside one with the same rows leave them out
};

struct LineChartSpec {
  QString title;
  QString x_axis, y_axis;
  std::vector<SweepSeries> series;
  bool log_x = false;
  bool log_y = false;
};

// A chart view owned by `parent`. Counting bars / series is how the tests check them.
QWidget* make_bar_chart(const BarChartSpec& spec, QWidget* parent);
QWidget* make_line_chart(const LineChartSpec& spec, QWidget* parent);
int chart_series_count(const QWidget* chart);
int chart_point_count(const QWidget* chart);  // bars or line points over all series

}  // namespace tessera::gui
