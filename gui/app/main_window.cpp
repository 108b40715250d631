#include "app/main_window.hpp"

#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <fstream>

#include "app/parameter_panel.hpp"
#include "app/simulation_runner.hpp"
#include "models/assignment_matrix_model.hpp"
#include "models/link_table_model.hpp"
#include "models/timeline_model.hpp"
#include "tessera/core/error.hpp"
#include "tessera/scenario/simulation.hpp"
#include "widgets/assignment_matrix_view.hpp"
#include "widgets/compare_view.hpp"
#include "widgets/network_view.hpp"
#include "widgets/timeline_view.hpp"
#include "widgets/view_export.hpp"

namespace tessera::gui {

namespace {
const QStringList kViewNames = {"matrix", "network", "timeline", "compare"};
constexpr int kDebounceMs = 250;  // one run per burst of edits
constexpr int kPlayTickMs = 40;   // 25 frames per second
constexpr int kPlayFrames = 200;  // a run plays in 8 s
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("Tessera — distributed attention explorer");
  panel_ = new ParameterPanel();
  runner_ = new SimulationRunner(this);
  matrix_model_ = new AssignmentMatrixModel(this);
  link_model_ = new LinkTableModel(this);
  timeline_model_ = new TimelineModel(this);

  auto* scroll = new QScrollArea();
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(panel_->sizeHint().width() + 24);
  auto* dock = new QDockWidget("Parameters", this);
  dock->setObjectName("parameters");
  dock->setWidget(scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  setCentralWidget(buildViews());
  buildMenus();

  summary_ = new QLabel();
  progress_ = new QProgressBar();
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  cancel_ = new QPushButton("Cancel");
  cancel_->setVisible(false);
  statusBar()->addWidget(summary_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);

  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kDebounceMs);
  connect(debounce_, &QTimer::timeout, this, &MainWindow::runNow);
  connect(panel_, &ParameterPanel::changed, this, &MainWindow::onParametersChanged);

  connect(runner_, &SimulationRunner::started, this, [this] {
    progress_->setValue(0);
    progress_->setVisible(true);
    cancel_->setVisible(true);
  });
  connect(runner_, &SimulationRunner::progress, this, [this](int percent, const QString& phase) {
    progress_->setValue(percent);
    progress_->setFormat(phase + " %p%");
  });
  connect(runner_, &SimulationRunner::finished, this, &MainWindow::showResult);
  connect(runner_, &SimulationRunner::failed, this, [this](const QString& why) {
    progress_->setVisible(false);
    cancel_->setVisible(false);
    showMessage(why);
    emit runFailed(why);
  });
  connect(runner_, &SimulationRunner::cancelled, this, [this] {
    progress_->setVisible(false);
    cancel_->setVisible(false);
    statusBar()->showMessage("Run cancelled; the views show the previous result", 5000);
  });
  connect(cancel_, &QPushButton::clicked, runner_, &SimulationRunner::cancel);

  player_ = new QTimer(this);
  player_->setInterval(kPlayTickMs);
  connect(player_, &QTimer::timeout, this, [this] {
    const int next = slider_->value() + kSteps / kPlayFrames;
    if (next >= kSteps) {
      slider_->setValue(kSteps);
      player_->stop();
      play_->setText("Play");
    } else {
      slider_->setValue(next);
    }
  });
  resize(1500, 950);
}

MainWindow::~MainWindow() = default;

QWidget* MainWindow::buildViews() {
  auto* central = new QWidget();
  auto* layout = new QVBoxLayout(central);
  message_ = new QLabel();
  message_->setObjectName("message");
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setStyleSheet("QLabel { background: #fde2e1; color: #8a1111; border: 1px solid #e0a0a0; padding: 6px; }");
  message_->setVisible(false);
  layout->addWidget(message_);

  tabs_ = new QTabWidget();
  // Matrix tab: the view plus the GPU selection and head group.
  auto* matrix_page = new QWidget();
  auto* matrix_layout = new QVBoxLayout(matrix_page);
  auto* matrix_controls = new QHBoxLayout();
  gpu_spin_ = new QSpinBox();
  gpu_spin_->setRange(-1, 0);
  gpu_spin_->setSpecialValueText("none");
  gpu_spin_->setValue(-1);
  head_group_spin_ = new QSpinBox();
  head_group_spin_->setRange(0, 0);
  matrix_controls->addWidget(new QLabel("selected GPU (or click a block)"));
  matrix_controls->addWidget(gpu_spin_);
  matrix_controls->addWidget(new QLabel("head group"));
  matrix_controls->addWidget(head_group_spin_);
  matrix_controls->addStretch(1);
  matrix_layout->addLayout(matrix_controls);
  matrix_view_ = new AssignmentMatrixView(matrix_model_);
  matrix_layout->addWidget(matrix_view_, 1);
  tabs_->addTab(matrix_page, "Assignment matrix");

  auto* network_page = new QWidget();
  auto* network_layout = new QVBoxLayout(network_page);
  auto* network_controls = new QHBoxLayout();
  metric_ = new QComboBox();
  metric_->addItems({"bytes routed", "utilisation (simulated)"});
  network_controls->addWidget(new QLabel("links by"));
  network_controls->addWidget(metric_);
  network_controls->addStretch(1);
  network_layout->addLayout(network_controls);
  network_view_ = new NetworkView(link_model_);
  network_layout->addWidget(network_view_, 1);
  tabs_->addTab(network_page, "Network");

  auto* timeline_page = new QWidget();
  auto* timeline_layout = new QVBoxLayout(timeline_page);
  timeline_view_ = new TimelineView(timeline_model_);
  timeline_layout->addWidget(timeline_view_, 1);
  op_details_ = new QLabel("Click an op for its details.");
  op_details_->setObjectName("op_details");
  op_details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  op_details_->setMinimumHeight(3 * op_details_->fontMetrics().height());
  timeline_layout->addWidget(op_details_);
  tabs_->addTab(timeline_page, "Timeline");

  compare_view_ = new CompareView();
  tabs_->addTab(compare_view_, "Compare");
  layout->addWidget(tabs_, 1);

  auto* steps = new QHBoxLayout();
  play_ = new QPushButton("Play");
  slider_ = new QSlider(Qt::Horizontal);
  slider_->setRange(0, kSteps);
  slider_->setValue(kSteps);
  time_label_ = new QLabel();
  time_label_->setMinimumWidth(200);
  steps->addWidget(play_);
  steps->addWidget(slider_, 1);
  steps->addWidget(time_label_);
  layout->addLayout(steps);

  connect(slider_, &QSlider::valueChanged, this, &MainWindow::onStepChanged);
  connect(play_, &QPushButton::clicked, this, [this] {
    if (player_->isActive()) {
      player_->stop();
      play_->setText("Play");
      return;
    }
    if (slider_->value() >= kSteps) slider_->setValue(0);
    player_->start();
    play_->setText("Pause");
  });
  connect(gpu_spin_, &QSpinBox::valueChanged, this, [this](int gpu) { setSelectedGpu(gpu); });
  connect(head_group_spin_, &QSpinBox::valueChanged, matrix_model_, &AssignmentMatrixModel::setHeadGroup);
  connect(matrix_view_, &AssignmentMatrixView::gpuSelected, this, &MainWindow::setSelectedGpu);
  connect(network_view_, &NetworkView::gpuSelected, this, &MainWindow::setSelectedGpu);
  connect(metric_, &QComboBox::currentIndexChanged, this, [this](int index) {
    network_view_->setMetric(index == 0 ? NetworkView::Metric::bytes : NetworkView::Metric::utilization);
  });
  connect(timeline_view_, &TimelineView::opClicked, this, [this](int op) {
    op_details_->setText(timeline_model_->opDetails(op));
    if (result_) setSelectedGpu(result_->schedule.ops[static_cast<size_t>(op)].gpu);
  });
  connect(tabs_, &QTabWidget::currentChanged, this,
          [this](int index) { panel_->setView(kViewNames[index].toStdString()); });
  connect(compare_view_, &CompareView::message, this, &MainWindow::showMessage);
  return central;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open session…", this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open session", QString(), "Session (*.json);;All files (*)");
    if (!path.isEmpty()) loadSession(path);
  });
  file->addAction("&Save session…", this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save session", "session.json", "Session (*.json)");
    if (!path.isEmpty()) saveSession(path);
  });
  file->addSeparator();
  file->addAction("Export view as &PNG…", this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Export view", currentViewName() + ".png", "PNG (*.png)");
    if (!path.isEmpty()) exportCurrentView(path);
  });
  file->addAction("Export view as S&VG…", this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Export view", currentViewName() + ".svg", "SVG (*.svg)");
    if (!path.isEmpty()) exportCurrentView(path);
  });
  file->addAction("Export &trace (Chrome JSON)…", this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Export trace", "trace.json", "Chrome trace (*.json)");
    if (!path.isEmpty()) exportTrace(path);
  });
  file->addSeparator();
  file->addAction("&Quit", this, &QWidget::close);
  QMenu* run = menuBar()->addMenu("&Run");
  run->addAction("&Run now", this, &MainWindow::runNow);
  run->addAction("&Cancel", runner_, &SimulationRunner::cancel);
}

void MainWindow::onParametersChanged() { debounce_->start(); }

void MainWindow::runNow() {
  debounce_->stop();
  runner_->start(panel_->session());
}

void MainWindow::applySession(const Session& session) {
  panel_->setSession(session);
  showView(QString::fromStdString(session.view));
  pending_selected_gpu_ = session.selected_gpu;
  runNow();
  if (!session.sweep.file.empty()) {
    try {
      compare_view_->loadSweep(QString::fromStdString(session.sweep.file));
      compare_view_->setLogAxes(session.sweep.log_x, session.sweep.log_y);
      compare_view_->setSweepColumns(QString::fromStdString(session.sweep.x), QString::fromStdString(session.sweep.y),
                                     QString::fromStdString(session.sweep.series));
    } catch (const UserError& error) {
      showMessage(QString("Sweep results not loaded: ") + error.what());
    }
  }
}

bool MainWindow::loadSession(const QString& path) {
  try {
    applySession(read_session(path));
    return true;
  } catch (const UserError& error) {
    showMessage(QString("Session not loaded: ") + error.what());
    return false;
  }
}

bool MainWindow::saveSession(const QString& path) {
  try {
    Session session = panel_->session();
    session.selected_gpu = matrix_model_->selectedGpu();
    session.sweep = compare_view_->sweepChoice();
    write_session(path, session);
    statusBar()->showMessage("Saved " + path, 5000);
    return true;
  } catch (const UserError& error) {
    showMessage(error.what());
    return false;
  }
}

bool MainWindow::showView(const QString& name) {
  const int index = static_cast<int>(kViewNames.indexOf(name));
  if (index < 0) return false;
  tabs_->setCurrentIndex(index);
  return true;
}

QString MainWindow::currentViewName() const { return kViewNames[tabs_->currentIndex()]; }

QWidget* MainWindow::currentView() const {
  switch (tabs_->currentIndex()) {
    case 0: return matrix_view_;
    case 1: return network_view_;
    case 2: return timeline_view_;
    default: return compare_view_;
  }
}

bool MainWindow::exportCurrentView(const QString& path) {
  if (!export_widget(currentView(), path)) {
    showMessage(path + ": cannot write the file");
    return false;
  }
  statusBar()->showMessage("Exported " + path, 5000);
  return true;
}

bool MainWindow::exportTrace(const QString& path) {
  if (!result_) {
    showMessage("No simulation to export yet");
    return false;
  }
  std::ofstream out(path.toStdString());
  if (out) sim::write_chrome_trace(out, result_->schedule, result_->sim);
  if (!out) {
    showMessage(path + ": cannot write the file");
    return false;
  }
  statusBar()->showMessage("Wrote the Chrome trace to " + path + " (open it in ui.perfetto.dev)", 5000);
  return true;
}

void MainWindow::setSelectedGpu(int gpu) {
  matrix_model_->setSelectedGpu(gpu);
  const int selected = matrix_model_->selectedGpu();
  network_view_->setSelectedGpu(selected);
  timeline_view_->setSelectedGpu(selected);
  const bool blocked = gpu_spin_->blockSignals(true);
  gpu_spin_->setValue(selected);
  gpu_spin_->blockSignals(blocked);
}

void MainWindow::setStep(int step) { slider_->setValue(step); }

void MainWindow::onStepChanged(int step) {
  const double makespan_s = result_ ? result_->sim.makespan_s : 0.0;
  const double time_s = makespan_s * step / kSteps;
  matrix_model_->setTime(time_s);
  timeline_view_->setTime(time_s);
  time_label_->setText(QString("t = %1 µs of %2 µs").arg(time_s * 1e6, 0, 'f', 1).arg(makespan_s * 1e6, 0, 'f', 1));
}

void MainWindow::showResult(std::shared_ptr<const ScenarioResult> result) {
  result_ = std::move(result);
  progress_->setVisible(false);
  cancel_->setVisible(false);
  clearMessage();
  const Schedule& schedule = result_->schedule;
  matrix_model_->setResult(result_);
  link_model_->setResult(result_);
  timeline_model_->setResult(result_);
  compare_view_->setResult(result_);
  gpu_spin_->setRange(-1, schedule.gpus - 1);
  head_group_spin_->setRange(0, schedule.head_groups - 1);
  if (pending_selected_gpu_ >= 0) matrix_model_->setSelectedGpu(pending_selected_gpu_);
  pending_selected_gpu_ = -1;
  setSelectedGpu(matrix_model_->selectedGpu());
  onStepChanged(slider_->value());
  summary_->setText(QString("%1 on %2: simulated %3 ms (%4 fidelity), alpha-beta %5 ms, busiest GPU receives %6")
                        .arg(QString::fromStdString(schedule.name()), QString::fromStdString(result_->topology.name))
                        .arg(result_->sim.makespan_s * 1e3, 0, 'f', 3)
                        .arg(QString::fromStdString(result_->session.fidelity))
                        .arg(result_->cost.time_s * 1e3, 0, 'f', 3)
                        .arg(format_bytes(static_cast<double>(result_->cost.recv_bytes_max))));
  // The wall time differs from run to run; kept out of the text so screenshots are reproducible.
  summary_->setToolTip(QString("generated, simulated and costed in %1 ms").arg(result_->wall_s * 1e3, 0, 'f', 0));
  emit resultShown();
}

void MainWindow::showMessage(const QString& text) {
  message_->setText(text);
  message_->setVisible(true);
  statusBar()->showMessage(text, 10000);
}

void MainWindow::clearMessage() {
  message_->clear();
  message_->setVisible(false);
}

QString MainWindow::messageText() const { return message_->isHidden() ? QString() : message_->text(); }
QString MainWindow::statusText() const { return summary_->text(); }

}  // namespace tessera::gui
