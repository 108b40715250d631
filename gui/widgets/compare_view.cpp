#include "widgets/compare_view.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

#include "plots/charts.hpp"
#include "tessera/core/error.hpp"

namespace tessera::gui {

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter_ = splitter;
  layout->addWidget(splitter);

  auto* bars = new QWidget(splitter);
  auto* bars_outer = new QVBoxLayout(bars);
  bars_outer->setContentsMargins(0, 0, 0, 0);
  bars_layout_ = new QGridLayout();
  bars_outer->addLayout(bars_layout_, 1);
  skipped_ = new QLabel(bars);
  skipped_->setWordWrap(true);
  bars_outer->addWidget(skipped_);

  auto* sweep = new QWidget(splitter);
  sweep_layout_ = new QVBoxLayout(sweep);
  sweep_layout_->setContentsMargins(0, 0, 0, 0);
  auto* controls = new QHBoxLayout();
  auto* open = new QPushButton("Open sweep CSV…", sweep);
  x_column_ = new QComboBox(sweep);
  y_column_ = new QComboBox(sweep);
  series_column_ = new QComboBox(sweep);
  log_x_ = new QCheckBox("log x", sweep);
  log_y_ = new QCheckBox("log y", sweep);
  sweep_source_ = new QLabel("no sweep results file", sweep);
  controls->addWidget(open);
  controls->addWidget(new QLabel("x", sweep));
  controls->addWidget(x_column_);
  controls->addWidget(new QLabel("y", sweep));
  controls->addWidget(y_column_);
  controls->addWidget(new QLabel("series", sweep));
  controls->addWidget(series_column_);
  controls->addWidget(log_x_);
  controls->addWidget(log_y_);
  controls->addWidget(sweep_source_, 1);
  sweep_layout_->addLayout(controls);
  splitter->setStretchFactor(0, 4);
  splitter->setStretchFactor(1, 1);
  sweep_hint_ = new QLabel(
      "Line charts from a sweep: open a results CSV (a header row, one row per point, units in the column names, "
      "e.g. gpus, seq, algo, time_s) and choose the x, y and series columns.",
      sweep);
  sweep_hint_->setWordWrap(true);
  sweep_hint_->setAlignment(Qt::AlignCenter);
  sweep_layout_->addWidget(sweep_hint_, 1);
  splitter->setSizes({4000, 1000});  // proportions: the bars get most of the height

  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open sweep results", QString(), "CSV (*.csv);;All files (*)");
    if (path.isEmpty()) return;
    try {
      loadSweep(path);
    } catch (const UserError& error) {
      emit message(QString::fromStdString(error.what()));
    }
  });
  for (QComboBox* box : {x_column_, y_column_, series_column_})
    connect(box, &QComboBox::currentTextChanged, this, [this] { rebuildLines(); });
  for (QCheckBox* box : {log_x_, log_y_}) connect(box, &QCheckBox::toggled, this, [this] { rebuildLines(); });
  rebuildBars();
}

void CompareView::setResult(std::shared_ptr<const ScenarioResult> result) {
  result_ = std::move(result);
  rebuildBars();
}

void CompareView::rebuildBars() {
  for (QWidget*& chart : bar_charts_) {
    delete chart;
    chart = nullptr;
  }
  // The three charts share their rows (fastest first), so only the first names them.
  BarChartSpec time{"Time, alpha-beta over the routed network (orange: shown schedule)", "ms", {}, {}, -1, true};
  BarChartSpec bytes{"Bytes received, busiest GPU", "MB (SI)", {}, {}, -1, false};
  BarChartSpec memory{"Peak buffer memory, fullest GPU", "MB (SI)", {}, {}, -1, false};
  if (result_) {
    // Fastest first, the same order in the three charts so a schedule sits on one line.
    std::vector<CompareRow> rows = result_->compare;
    std::stable_sort(rows.begin(), rows.end(), [](const CompareRow& a, const CompareRow& b) { return a.time_s < b.time_s; });
    for (size_t k = 0; k < rows.size(); ++k) {
      const CompareRow& row = rows[k];
      const QString label = QString::fromStdString(row.label);
      for (BarChartSpec* spec : {&time, &bytes, &memory}) {
        spec->categories << label;
        if (row.is_current) spec->highlighted = static_cast<int>(k);
      }
      time.values.push_back(row.time_s * 1e3);
      bytes.values.push_back(static_cast<double>(row.recv_bytes_max) / 1e6);
      memory.values.push_back(static_cast<double>(row.peak_memory_bytes_max) / 1e6);
    }
    QStringList skipped;
    for (const std::string& reason : result_->compare_skipped) skipped << QString::fromStdString(reason);
    skipped_->setText(skipped.isEmpty() ? QString() : "Not applicable: " + skipped.join("; "));
  }
  bar_charts_[0] = make_bar_chart(time, this);
  bar_charts_[1] = make_bar_chart(bytes, this);
  bar_charts_[2] = make_bar_chart(memory, this);
  bars_layout_->addWidget(bar_charts_[0], 0, 0);
  bars_layout_->addWidget(bar_charts_[1], 0, 1);
  bars_layout_->addWidget(bar_charts_[2], 0, 2);
  bars_layout_->setColumnStretch(0, 2);
  bars_layout_->setColumnStretch(1, 1);
  bars_layout_->setColumnStretch(2, 1);
}

void CompareView::loadSweep(const QString& path) {
  SweepTable table = SweepTable::read(path);  // throws before anything changes
  sweep_ = std::move(table);
  sweep_path_ = path;
  const QStringList numeric = sweep_->numericColumns();
  for (QComboBox* box : {x_column_, y_column_, series_column_}) {
    box->blockSignals(true);
    box->clear();
  }
  x_column_->addItems(numeric);
  y_column_->addItems(numeric);
  series_column_->addItem(QString());
  series_column_->addItems(sweep_->columns());
  // Guesses that suit the sweep runner's files: x = gpus or seq, y = a time, series = the
  // algorithm (or the schedule).
  auto pick = [](QComboBox* box, const QStringList& names) {
    for (const QString& name : names)
      if (const int index = box->findText(name); index >= 0) {
        box->setCurrentIndex(index);
        return;
      }
  };
  pick(x_column_, {"gpus", "seq", "seq_len"});
  if (y_column_->count() > 1) y_column_->setCurrentIndex(1);
  pick(y_column_, {"time_s", "simulated_time_s", "simulated_s", "makespan_s"});
  pick(series_column_, {"algo", "algorithm", "schedule"});
  for (QComboBox* box : {x_column_, y_column_, series_column_}) box->blockSignals(false);
  sweep_source_->setText(QFileInfo(path).fileName() + QString(": %1 rows").arg(sweep_->rowCount()));
  rebuildLines();
}

void CompareView::setSweepColumns(const QString& x, const QString& y, const QString& series) {
  for (QComboBox* box : {x_column_, y_column_, series_column_}) box->blockSignals(true);
  x_column_->setCurrentText(x);
  y_column_->setCurrentText(y);
  series_column_->setCurrentText(series);
  for (QComboBox* box : {x_column_, y_column_, series_column_}) box->blockSignals(false);
  rebuildLines();
}

void CompareView::setLogAxes(bool log_x, bool log_y) {
  const bool blocked_x = log_x_->blockSignals(true), blocked_y = log_y_->blockSignals(true);
  log_x_->setChecked(log_x);
  log_y_->setChecked(log_y);
  log_x_->blockSignals(blocked_x);
  log_y_->blockSignals(blocked_y);
  rebuildLines();
}

SweepChoice CompareView::sweepChoice() const {
  SweepChoice choice;
  if (!sweep_) return choice;
  choice.file = sweep_path_.toStdString();
  choice.x = x_column_->currentText().toStdString();
  choice.y = y_column_->currentText().toStdString();
  choice.series = series_column_->currentText().toStdString();
  choice.log_x = log_x_->isChecked();
  choice.log_y = log_y_->isChecked();
  return choice;
}

void CompareView::rebuildLines() {
  if (!sweep_ || x_column_->currentText().isEmpty() || y_column_->currentText().isEmpty()) return;
  LineChartSpec spec;
  spec.x_axis = x_column_->currentText();
  spec.y_axis = y_column_->currentText();
  spec.log_x = log_x_->isChecked();
  spec.log_y = log_y_->isChecked();
  spec.title = spec.y_axis + " against " + spec.x_axis;
  try {
    spec.series = sweep_->series(spec.x_axis, spec.y_axis, series_column_->currentText());
  } catch (const UserError& error) {
    emit message(QString::fromStdString(error.what()));
    return;
  }
  delete line_chart_;
  if (sweep_hint_->isVisibleTo(this) || !sweep_hint_->isHidden()) {
    sweep_hint_->hide();
    splitter_->setSizes({5000, 4000});  // the first sweep chart gets room of its own
  }
  line_chart_ = make_line_chart(spec, this);
  sweep_layout_->addWidget(line_chart_, 1);
}

}  // namespace tessera::gui
