#pragma once
// Compare: bar charts of every schedule of the current problem (analytical time over the
// routed network, bytes received by the busiest GPU, peak buffer memory), the current one in
// orange; below, line charts from a sweep results CSV with a chosen x, y and series column.
#include <QWidget>

#include <memory>
#include <optional>

#include "models/scenario_run.hpp"
#include "models/session.hpp"
#include "models/sweep_table.hpp"

class QComboBox;
class QCheckBox;
class QLabel;
class QGridLayout;
class QSplitter;
class QVBoxLayout;

namespace tessera::gui {

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);

  void setResult(std::shared_ptr<const ScenarioResult> result);
  // Reads a sweep CSV; throws UserError (the caller shows it).
  void loadSweep(const QString& path);
  void setSweepColumns(const QString& x, const QString& y, const QString& series);
  void setLogAxes(bool log_x, bool log_y);
  // What a session saves of the sweep chart (file "" when none is loaded).
  SweepChoice sweepChoice() const;

  // The charts, for tests: 0 time, 1 bytes, 2 memory; the sweep's line chart (null before).
  QWidget* barChart(int index) const { return bar_charts_[static_cast<size_t>(index)]; }
  QWidget* lineChart() const { return line_chart_; }

 signals:
  void message(const QString& text);  // errors for the window's message area

 private:
  void rebuildBars();
  void rebuildLines();

  std::shared_ptr<const ScenarioResult> result_;
  std::optional<SweepTable> sweep_;
  QString sweep_path_;
  QGridLayout* bars_layout_;
  QWidget* bar_charts_[3] = {nullptr, nullptr, nullptr};
  QLabel* skipped_;
  QVBoxLayout* sweep_layout_;
  QComboBox* x_column_;
  QComboBox* y_column_;
  QComboBox* series_column_;
  QCheckBox* log_x_;
  QCheckBox* log_y_;
  QSplitter* splitter_;
  QLabel* sweep_source_;
  QLabel* sweep_hint_;
  QWidget* line_chart_ = nullptr;
};

}  // namespace tessera::gui
