#include "plots/charts.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QHorizontalStackedBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>

#include <algorithm>

namespace tessera::gui {

QWidget* make_bar_chart(const BarChartSpec& spec, QWidget* parent) {
  auto* chart = new QChart();
  chart->setTitle(spec.title);
  chart->legend()->hide();
  chart->setMargins(QMargins(2, 2, 2, 2));
  // Horizontal bars, so that long schedule names stay readable; the first category on top
  // (a category axis counts from the bottom, hence the reversed order). The current schedule
  // goes in a second set so that it gets its own colour (a bar set has one colour).
  auto* normal = new QBarSet("schedules");
  auto* current = new QBarSet("current");
  QStringList categories;
  double max_value = 0;
  for (size_t k = spec.values.size(); k-- > 0;) {
    const bool is_current = static_cast<int>(k) == spec.highlighted;
    *normal << (is_current ? 0.0 : spec.values[k]);
    *current << (is_current ? spec.values[k] : 0.0);
    categories << spec.categories[static_cast<qsizetype>(k)];
    max_value = std::max(max_value, spec.values[k]);
  }
  normal->setColor(QColor(90, 130, 190));
  current->setColor(QColor(230, 120, 40));
  // Stacked: each slot holds one non-zero value, so every bar takes the full slot.
  auto* series = new QHorizontalStackedBarSeries();
  series->append(normal);
  series->append(current);
  series->setBarWidth(0.8);
  chart->addSeries(series);
  auto* category_axis = new QBarCategoryAxis();
  category_axis->append(categories);
  QFont small = category_axis->labelsFont();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * (spec.values.size() > 20 ? 0.72 : 0.85)));
  category_axis->setLabelsFont(small);
  category_axis->setTruncateLabels(false);
  category_axis->setLabelsVisible(spec.show_categories);
  chart->addAxis(category_axis, Qt::AlignLeft);
  series->attachAxis(category_axis);
  auto* values = new QValueAxis();
  values->setTitleText(spec.value_axis);
  values->setLabelsFont(small);
  values->setRange(0, max_value > 0 ? max_value * 1.05 : 1.0);
  values->setTickCount(4);
  chart->addAxis(values, Qt::AlignBottom);
  series->attachAxis(values);
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(160, 160);
  return view;
}

QWidget* make_line_chart(const LineChartSpec& spec, QWidget* parent) {
  auto* chart = new QChart();
  chart->setTitle(spec.title);
  double min_x = 0, max_x = 1, min_y = 0, max_y = 1;
  bool first = true;
  for (const SweepSeries& data : spec.series) {
    auto* line = new QLineSeries();
    line->setName(data.name.isEmpty() ? spec.y_axis : data.name);
    line->setPointsVisible(true);
    for (const QPointF& point : data.points) {
      if ((spec.log_x && point.x() <= 0) || (spec.log_y && point.y() <= 0)) continue;  // not on a log axis
      line->append(point);
      if (first) {
        min_x = max_x = point.x();
        min_y = max_y = point.y();
        first = false;
      }
      min_x = std::min(min_x, point.x());
      max_x = std::max(max_x, point.x());
      min_y = std::min(min_y, point.y());
      max_y = std::max(max_y, point.y());
    }
    chart->addSeries(line);
  }
  auto make_axis = [](bool log, double base) -> QAbstractAxis* {
    if (!log) return new QValueAxis();
    auto* axis = new QLogValueAxis();
    axis->setBase(base);
    axis->setLabelFormat("%g");
    axis->setMinorTickCount(-1);
    return axis;
  };
  QAbstractAxis* x_axis = make_axis(spec.log_x, 2);
  x_axis->setTitleText(spec.x_axis);
  x_axis->setTruncateLabels(false);
  x_axis->setRange(min_x, max_x > min_x ? max_x : min_x * 2 + 1);
  QAbstractAxis* y_axis = make_axis(spec.log_y, 10);
  y_axis->setTitleText(spec.y_axis);
  y_axis->setTruncateLabels(false);
  if (spec.log_y)
    y_axis->setRange(min_y / 1.2, max_y * 1.2);
  else
    y_axis->setRange(std::min(0.0, min_y), max_y > 0 ? max_y * 1.05 : 1.0);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->addAxis(x_axis, Qt::AlignBottom);
  chart->addAxis(y_axis, Qt::AlignLeft);
  for (QAbstractSeries* series : chart->series()) {
    series->attachAxis(x_axis);
    series->attachAxis(y_axis);
  }
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  return view;
}

int chart_series_count(const QWidget* widget) {
  const auto* view = qobject_cast<const QChartView*>(widget);
  return view && view->chart() ? static_cast<int>(view->chart()->series().size()) : 0;
}

int chart_point_count(const QWidget* widget) {
  const auto* view = qobject_cast<const QChartView*>(widget);
  if (!view || !view->chart()) return 0;
  int points = 0;
  for (QAbstractSeries* series : view->chart()->series()) {
    if (auto* line = qobject_cast<QXYSeries*>(series)) points += static_cast<int>(line->count());
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(series))
      for (QBarSet* set : bars->barSets())
        for (int k = 0; k < set->count(); ++k) points += set->at(k) != 0.0 ? 1 : 0;
  }
  return points;
}

}  // namespace tessera::gui
