#pragma once
// The simulated timeline as an item model: one row per segment, a segment being an interval
// of one GPU in one lane. Lanes: compute (compute and merge ops), send, receive (collectives
// count as both: they send and receive), and wait: the gaps in a GPU's compute lane before it
// finishes, i.e. its exposed wait, which sum to GpuTimes::exposed_wait_s.
#include <QAbstractTableModel>

#include <memory>
#include <span>
#include <vector>

#include "models/scenario_run.hpp"

namespace tessera::gui {

enum class Lane : int { compute = 0, send = 1, receive = 2, wait = 3 };
inline constexpr int kLaneCount = 4;
QString lane_name(Lane lane);

struct Segment {
  int gpu = 0;
  Lane lane = Lane::compute;
  double start_s = 0;
  double finish_s = 0;
  int op = -1;  // index into Schedule::ops; -1 for waits
};

class TimelineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { GpuColumn, LaneColumn, KindColumn, StartColumn, FinishColumn, DescriptionColumn, ColumnCount };
  enum Role { GpuRole = Qt::UserRole + 1, LaneRole, StartRole, FinishRole, OpRole };

  explicit TimelineModel(QObject* parent = nullptr);
  void setResult(std::shared_ptr<const ScenarioResult> result);
  const ScenarioResult* result() const { return result_.get(); }

  int gpus() const { return gpus_; }
  double makespan_s() const { return result_ ? result_->sim.makespan_s : 0.0; }
  const std::vector<Segment>& segments() const { return segments_; }
  // Segments of one GPU, ordered by lane then start.
  std::span<const Segment> segmentsOf(int gpu) const;
  // Details of an op for the details panel: what it is, when, what it moves or computes.
  QString opDetails(int op) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const ScenarioResult> result_;
  int gpus_ = 0;
  std::vector<Segment> segments_;
  std::vector<size_t> gpu_offsets_;  // segments_ of GPU g: [gpu_offsets_[g], gpu_offsets_[g + 1])
};

}  // namespace tessera::gui
