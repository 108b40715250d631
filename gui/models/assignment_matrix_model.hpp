#pragma once
// The assignment matrix as an item model: an n x n table, row = query chunk i, column =
// key/value chunk j; each cell is block (h, i, j) of one head group h. A cell knows the GPU
// that computes it, its work (unmasked pairs), when it runs in the simulation, and whether it
// is done at the current time of the step slider. Selecting a GPU marks its tile and the
// chunks it must receive (rows whose Q it receives, columns whose KV it receives).
#include <QAbstractTableModel>
#include <QColor>

#include <memory>
#include <vector>

#include "models/scenario_run.hpp"

namespace tessera::gui {

class AssignmentMatrixModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role {
    OwnerGpuRole = Qt::UserRole + 1,  // int, -1 when masked (no work, never scheduled)
    WorkPairsRole,                    // qlonglong: unmasked (query, key) pairs of one head
    StartRole,                        // double seconds: forward compute op start (or backward's)
    FinishRole,                       // double seconds
    DoneRole,                         // bool: finished at the current time
    SelectedTileRole,                 // bool: owned by the selected GPU
    ReceivedRole,                     // bool: its Q row or KV column is received by the selected GPU
  };

  explicit AssignmentMatrixModel(QObject* parent = nullptr);

  void setResult(std::shared_ptr<const ScenarioResult> result);
  void setHeadGroup(int head_group);
  void setSelectedGpu(int gpu);  // -1: none
  void setTime(double time_s);   // blocks finished by then are done

  int headGroup() const { return head_group_; }
  int selectedGpu() const { return selected_gpu_; }
  double time_s() const { return time_s_; }
  int chunks() const { return chunks_; }
  const ScenarioResult* result() const { return result_.get(); }

  // Direct access for painting and tests (no QVariant per cell).
  int owner(int q_chunk, int kv_chunk) const;
  bool isDone(int q_chunk, int kv_chunk) const;
  QColor cellColor(int q_chunk, int kv_chunk) const;
  // Chunks the selected GPU receives (by Q row and KV column), for the current head group.
  const std::vector<bool>& receivedRows() const { return received_rows_; }
  const std::vector<bool>& receivedColumns() const { return received_columns_; }

  // A transfer in flight at the current time: which chunk moves, from which rank to which.
  struct InFlight {
    DataItem item;
    int src = 0;
    int dst = 0;
  };
  std::vector<InFlight> inFlight() const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Cell {
    int owner = -1;
    int backward_owner = -1;
    int64_t pairs = 0;
    double start_s = 0, finish_s = 0;
    double backward_start_s = 0, backward_finish_s = 0;
  };
  void rebuild();
  void rebuildSelection();
  const Cell& cell(int q_chunk, int kv_chunk) const {
    return cells_[static_cast<size_t>(q_chunk) * static_cast<size_t>(chunks_) + static_cast<size_t>(kv_chunk)];
  }
  QString toolTip(int q_chunk, int kv_chunk) const;

  std::shared_ptr<const ScenarioResult> result_;
  int chunks_ = 0;
  int head_group_ = 0;
  int selected_gpu_ = -1;
  double time_s_ = 0;
  std::vector<Cell> cells_;
  std::vector<bool> received_rows_, received_columns_;
};

}  // namespace tessera::gui
