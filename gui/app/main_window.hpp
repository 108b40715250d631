#pragma once
// The main window: the parameter panel on the left; the four linked views in tabs (assignment
// matrix, network, timeline, compare); under them the step slider with a play button; a
// message area for errors; progress, summary and a cancel button in the status bar.
// Changing a parameter starts a new run (debounced); the views update when it finishes.
#include <QMainWindow>

#include <memory>

#include "models/scenario_run.hpp"

class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTimer;
class QComboBox;

namespace tessera::gui {

class AssignmentMatrixModel;
class AssignmentMatrixView;
class CompareView;
class LinkTableModel;
class NetworkView;
class ParameterPanel;
class SimulationRunner;
class TimelineModel;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads a session file into the panel and starts a run; a bad file leaves the panel as it
  // was and shows the error in the message area. Returns false on error.
  bool loadSession(const QString& path);
  bool saveSession(const QString& path);
  void applySession(const Session& session);
  void runNow();  // start a run with the panel's parameters, without waiting for the debounce

  bool showView(const QString& name);  // matrix | network | timeline | compare
  QWidget* currentView() const;
  QString currentViewName() const;
  bool exportCurrentView(const QString& path);  // PNG or SVG by suffix
  bool exportTrace(const QString& path);        // Chrome JSON of the last simulation
  void setSelectedGpu(int gpu);
  void setStep(int step);  // 0 .. kSteps: the slider (time = step / kSteps x makespan)

  static constexpr int kSteps = 1000;

  // For tests and the headless mode.
  ParameterPanel* parameterPanel() const { return panel_; }
  SimulationRunner* runner() const { return runner_; }
  AssignmentMatrixModel* matrixModel() const { return matrix_model_; }
  AssignmentMatrixView* matrixView() const { return matrix_view_; }
  LinkTableModel* linkModel() const { return link_model_; }
  NetworkView* networkView() const { return network_view_; }
  TimelineModel* timelineModel() const { return timeline_model_; }
  TimelineView* timelineView() const { return timeline_view_; }
  CompareView* compareView() const { return compare_view_; }
  std::shared_ptr<const ScenarioResult> result() const { return result_; }
  QString messageText() const;    // the message area ("" when hidden)
  QString statusText() const;     // the summary in the status bar

 signals:
  void resultShown();                  // a run finished and every view shows it
  void runFailed(const QString& why);  // the message area shows why

 private:
  void buildMenus();
  QWidget* buildViews();
  void showResult(std::shared_ptr<const ScenarioResult> result);
  void showMessage(const QString& text);
  void clearMessage();
  void onParametersChanged();
  void onStepChanged(int step);

  ParameterPanel* panel_;
  SimulationRunner* runner_;
  AssignmentMatrixModel* matrix_model_;
  LinkTableModel* link_model_;
  TimelineModel* timeline_model_;
  AssignmentMatrixView* matrix_view_ = nullptr;
  NetworkView* network_view_ = nullptr;
  TimelineView* timeline_view_ = nullptr;
  CompareView* compare_view_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* op_details_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QSlider* slider_ = nullptr;
  QPushButton* play_ = nullptr;
  QLabel* time_label_ = nullptr;
  QSpinBox* gpu_spin_ = nullptr;
  QSpinBox* head_group_spin_ = nullptr;
  QComboBox* metric_ = nullptr;
  QTimer* debounce_ = nullptr;
  QTimer* player_ = nullptr;
  std::shared_ptr<const ScenarioResult> result_;
  int pending_selected_gpu_ = -1;  // from a session, applied when its run is shown
};

}  // namespace tessera::gui
