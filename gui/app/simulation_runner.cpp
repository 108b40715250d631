#include "app/simulation_runner.hpp"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <exception>

#include "tessera/core/error.hpp"

namespace tessera::gui {

SimulationRunner::SimulationRunner(QObject* parent) : QObject(parent) {}

SimulationRunner::~SimulationRunner() {
  if (cancel_flag_) cancel_flag_->store(true);
  for (QThread* thread : threads_) {
    thread->wait();
    delete thread;
  }
}

void SimulationRunner::cancel() {
  if (!running_) return;
  if (cancel_flag_) cancel_flag_->store(true);
  ++job_;  // whatever the worker still delivers is stale now
  running_ = false;
  emit cancelled();
}

void SimulationRunner::start(const Session& session) {
  if (cancel_flag_) cancel_flag_->store(true);  // the previous job stops at its next phase
  const uint64_t job = ++job_;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  cancel_flag_ = flag;
  running_ = true;
  emit started();

  QPointer<SimulationRunner> self(this);
  // Results travel as queued calls into this object's (the GUI) thread; the job id check
  // there, not on the worker, decides whether they still count.
  auto deliver = [self, job](auto call) {
    QMetaObject::invokeMethod(
        self.data(),
        [self, job, call] {
          if (self && self->job_ == job) call(*self);
        },
        Qt::QueuedConnection);
  };
  QThread* thread = QThread::create([session, flag, deliver] {
    RunControl control;
    control.cancel = flag.get();
    control.progress = [deliver](int percent, const std::string& phase) {
      const QString text = QString::fromStdString(phase);
      deliver([percent, text](SimulationRunner& runner) { emit runner.progress(percent, text); });
    };
    try {
      std::shared_ptr<const ScenarioResult> result = run_scenario(session, control);
      if (flag->load()) return;  // cancelled while simulating: discard the result
      deliver([result](SimulationRunner& runner) {
        runner.running_ = false;
        emit runner.finished(result);
      });
    } catch (const RunCancelled&) {
    } catch (const UserError& error) {
      const QString message = QString::fromStdString(error.what());
      deliver([message](SimulationRunner& runner) {
        runner.running_ = false;
        emit runner.failed(message);
      });
    } catch (const std::exception& error) {
      // A library bug (e.g. a generator producing an invalid schedule): report, never crash.
      const QString message = "internal error: " + QString::fromStdString(error.what());
      deliver([message](SimulationRunner& runner) {
        runner.running_ = false;
        emit runner.failed(message);
      });
    }
  });
  // Finished workers are reaped on the GUI thread.
  connect(thread, &QThread::finished, this, [this, thread] {
    std::erase(threads_, thread);
    thread->deleteLater();
  });
  threads_.push_back(thread);
  thread->start();
}

}  // namespace tessera::gui
