#include "models/link_table_model.hpp"

#include <algorithm>

namespace tessera::gui {

QString format_bytes(double bytes) {
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 5) {
    bytes /= 1000;
    ++unit;
  }
  return QString::number(bytes, 'f', unit == 0 ? 0 : 2) + " " + kUnits[unit];
}

LinkTableModel::LinkTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LinkTableModel::setResult(std::shared_ptr<const ScenarioResult> result) {
  beginResetModel();
  result_ = std::move(result);
  edges_ = result_ ? result_->topology.link_count() : 0;
  max_bytes_ = max_utilization_ = 0;
  for (int edge = 0; edge < edges_; ++edge) {
    max_bytes_ = std::max(max_bytes_, bytes(edge));
    max_utilization_ = std::max(max_utilization_, utilization(edge));
  }
  endResetModel();
}

double LinkTableModel::bytes(int edge) const {
  const auto& loads = result_->link_loads.edge_bytes;
  return edge < static_cast<int>(loads.size()) ? static_cast<double>(loads[static_cast<size_t>(edge)]) : 0.0;
}

double LinkTableModel::utilization(int edge) const {
  const topo::Topology& topology = result_->topology;
  const int resource = topology.link(edge).resource;
  const auto& resources = result_->sim.resources;
  if (resource < 0 || resource >= static_cast<int>(resources.size())) return 0;
  return resources[static_cast<size_t>(resource)].utilization;
}

QString LinkTableModel::toolTip(int edge) const {
  const topo::Topology& topology = result_->topology;
  const topo::LinkInfo& link = topology.link(edge);
  return QString("%1\n%2 link, %3 GB/s, %4 µs\nrouted: %5\nutilisation: %6 % of the makespan")
      .arg(QString::fromStdString(topology.link_name(edge)), QString::fromStdString(topo::to_string(link.link_class)))
      .arg(link.bytes_per_s / 1e9, 0, 'f', 1)
      .arg(link.latency_s * 1e6, 0, 'f', 2)
      .arg(format_bytes(bytes(edge)))
      .arg(100 * utilization(edge), 0, 'f', 1);
}

int LinkTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : edges_; }
int LinkTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LinkTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= edges_ || index.column() >= ColumnCount) return {};
  const int edge = index.row();
  const topo::Topology& topology = result_->topology;
  const topo::LinkInfo& link = topology.link(edge);
  const int32_t source = topology.link_source(edge), target = topology.link_target(edge);
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case FromColumn: return QString::fromStdString(topology.vertex(source).name);
        case ToColumn: return QString::fromStdString(topology.vertex(target).name);
        case ClassColumn: return QString::fromStdString(topo::to_string(link.link_class));
        case BandwidthColumn: return QString::number(link.bytes_per_s / 1e9, 'f', 1) + " GB/s";
        case BytesColumn: return format_bytes(bytes(edge));
        case UtilizationColumn: return QString::number(100 * utilization(edge), 'f', 1) + " %";
      }
      return {};
    case Qt::ToolTipRole: return toolTip(edge);
    case BytesRole: return bytes(edge);
    case UtilizationRole: return utilization(edge);
    case BandwidthRole: return link.bytes_per_s;
    case SourceVertexRole: return static_cast<int>(source);
    case TargetVertexRole: return static_cast<int>(target);
    default: return {};
  }
}

QVariant LinkTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section;
  static const char* kNames[] = {"from", "to", "class", "bandwidth", "bytes", "utilisation"};
  return section >= 0 && section < ColumnCount ? QVariant(kNames[section]) : QVariant();
}

}  // namespace tessera::gui
