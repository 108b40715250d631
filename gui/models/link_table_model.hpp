#pragma once
// The links of the network as an item model: one row per directed link (Topology::edges),
// with the bytes the schedule routes over it (topo::compute_link_loads: every send/recv and
// collective transfer on its route) and the utilisation the simulator measured on the link's
// resource (bytes / (capacity x makespan)).
#include <QAbstractTableModel>

#include <memory>

#include "models/scenario_run.hpp"

namespace tessera::gui {

class LinkTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { FromColumn, ToColumn, ClassColumn, BandwidthColumn, BytesColumn, UtilizationColumn, ColumnCount };
  enum Role {
    BytesRole = Qt::UserRole + 1,  // double: routed bytes over this direction
    UtilizationRole,               // double in [0, 1]
    BandwidthRole,                 // double bytes per second
    SourceVertexRole,              // int: Boost vertex index
    TargetVertexRole,
  };

  explicit LinkTableModel(QObject* parent = nullptr);
  void setResult(std::shared_ptr<const ScenarioResult> result);
  const ScenarioResult* result() const { return result_.get(); }

  double bytes(int edge) const;
  double utilization(int edge) const;
  double maxBytes() const { return max_bytes_; }
  double maxUtilization() const { return max_utilization_; }
  QString toolTip(int edge) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const ScenarioResult> result_;
  int edges_ = 0;
  double max_bytes_ = 0, max_utilization_ = 0;
};

// "1.50 GB" (SI, as everywhere in Tessera).
QString format_bytes(double bytes);

}  // namespace tessera::gui
