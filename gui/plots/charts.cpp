#include "plots/charts.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
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
  // Horizontal ordering by category; the current schedule goes in a second set so that it
  // gets its own colour (a bar set has one colour).
  auto* normal = new QBarSet("schedules");
  auto* current = new QBarSet("current");
  double max_value = 0;
  for (size_t k = 0; k < spec.values.size(); ++k) {
    const bool is_current = static_cast<int>(k) == spec.highlighted;
    *normal << (is_current ? 0.0 : spec.values[k]);
    *current << (is_current ? spec.values[k] : 0.0);
    max_value = std::max(max_value, spec.values[k]);
  }
  normal->setColor(QColor(90, 130, 190));
  current->setColor(QColor(230, 120, 40));
  auto* series = new QBarSeries();
  series->append(normal);
  series->append(current);
  series->setBarWidth(0.9);
  chart->addSeries(series);
  auto* categories = new QBarCategoryAxis();
  categories->append(spec.categories);
  categories->setLabelsAngle(-60);
  chart->addAxis(categories, Qt::AlignBottom);
  series->attachAxis(categories);
  auto* values = new QValueAxis();
  values->setTitleText(spec.value_axis);
  values->setRange(0, max_value > 0 ? max_value * 1.05 : 1.0);
  chart->addAxis(values, Qt::AlignLeft);
  series->attachAxis(values);
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
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
      if (spec.log_x && point.x() <= 0) continue;
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
  QAbstractAxis* x_axis = nullptr;
  if (spec.log_x) {
    auto* axis = new QLogValueAxis();
    axis->setBase(2);
    axis->setLabelFormat("%g");
    x_axis = axis;
  } else {
    x_axis = new QValueAxis();
  }
  x_axis->setTitleText(spec.x_axis);
  x_axis->setRange(min_x, max_x > min_x ? max_x : min_x + 1);
  auto* y_axis = new QValueAxis();
  y_axis->setTitleText(spec.y_axis);
  y_axis->setRange(std::min(0.0, min_y), max_y > 0 ? max_y * 1.05 : 1.0);
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
    if (auto* bars = qobject_cast<QBarSeries*>(series))
      for (QBarSet* set : bars->barSets())
        for (int k = 0; k < set->count(); ++k) points += set->at(k) != 0.0 ? 1 : 0;
  }
  return points;
}

}  // namespace tessera::gui
