#pragma once
// Runs the pipeline (models/scenario_run.hpp) on a worker thread, one job per parameter
// change. Progress and the result come back to the GUI thread through queued calls; a job id
// drops the results of jobs that a newer one replaced, so only the latest run is shown.
//
// Cancelling sets the job's atomic flag, which run_scenario checks between phases. The
// simulator has no cancel hook: a simulation that has started runs to its end on the worker
// and its result is thrown away (the window is free meanwhile).
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <vector>

#include "models/scenario_run.hpp"

class QThread;

namespace tessera::gui {

class SimulationRunner : public QObject {
  Q_OBJECT
 public:
  explicit SimulationRunner(QObject* parent = nullptr);
  ~SimulationRunner() override;  // cancels and joins the workers

  void start(const Session& session);
  void cancel();
  bool isRunning() const { return running_; }

 signals:
  void started();
  void progress(int percent, const QString& phase);
  void finished(std::shared_ptr<const ScenarioResult> result);
  void failed(const QString& message);
  void cancelled();

 private:
  uint64_t job_ = 0;  // the job whose results count; only touched on the GUI thread
  bool running_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  std::vector<QThread*> threads_;
};

}  // namespace tessera::gui
