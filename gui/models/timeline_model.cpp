#include "models/timeline_model.hpp"

#include <algorithm>

#include "models/link_table_model.hpp"
#include "tessera/core/data_size.hpp"

namespace tessera::gui {

QString lane_name(Lane lane) {
  switch (lane) {
    case Lane::compute: return "compute";
    case Lane::send: return "send";
    case Lane::receive: return "receive";
    case Lane::wait: return "wait";
  }
  return "?";
}

TimelineModel::TimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimelineModel::setResult(std::shared_ptr<const ScenarioResult> result) {
  beginResetModel();
  result_ = std::move(result);
  segments_.clear();
  gpus_ = result_ ? result_->schedule.gpus : 0;
  if (result_) {
    const Schedule& schedule = result_->schedule;
    const sim::SimResult& sim = result_->sim;
    const size_t timed = std::min(schedule.ops.size(), sim.op_start_s.size());
    for (size_t index = 0; index < timed; ++index) {
      const Op& op = schedule.ops[index];
      Segment segment{op.gpu, Lane::compute, sim.op_start_s[index], sim.op_finish_s[index], static_cast<int>(index)};
      switch (op.kind) {
        case OpKind::compute:
        case OpKind::merge: segments_.push_back(segment); break;
        case OpKind::send: segment.lane = Lane::send; segments_.push_back(segment); break;
        case OpKind::recv: segment.lane = Lane::receive; segments_.push_back(segment); break;
        case OpKind::collective:
          segment.lane = Lane::send;
          segments_.push_back(segment);
          segment.lane = Lane::receive;
          segments_.push_back(segment);
          break;
      }
    }
    auto order = [](const Segment& a, const Segment& b) {
      if (a.gpu != b.gpu) return a.gpu < b.gpu;
      if (a.lane != b.lane) return a.lane < b.lane;
      if (a.start_s != b.start_s) return a.start_s < b.start_s;
      return a.op < b.op;
    };
    std::sort(segments_.begin(), segments_.end(), order);
    // Waits: the gaps of the compute lane between 0 and the GPU's finish.
    std::vector<Segment> waits;
    size_t next = 0;
    for (int gpu = 0; gpu < gpus_; ++gpu) {
      double covered_until_s = 0;
      for (; next < segments_.size() && segments_[next].gpu == gpu; ++next) {
        const Segment& segment = segments_[next];
        if (segment.lane != Lane::compute) continue;
        if (segment.start_s > covered_until_s) waits.push_back({gpu, Lane::wait, covered_until_s, segment.start_s, -1});
        covered_until_s = std::max(covered_until_s, segment.finish_s);
      }
      const double finish_s = gpu < static_cast<int>(sim.gpus.size()) ? sim.gpus[static_cast<size_t>(gpu)].finish_s : 0;
      if (finish_s > covered_until_s) waits.push_back({gpu, Lane::wait, covered_until_s, finish_s, -1});
    }
    segments_.insert(segments_.end(), waits.begin(), waits.end());
    std::sort(segments_.begin(), segments_.end(), order);
  }
  gpu_offsets_.assign(static_cast<size_t>(gpus_) + 1, segments_.size());
  for (size_t index = segments_.size(); index-- > 0;) gpu_offsets_[static_cast<size_t>(segments_[index].gpu)] = index;
  // GPUs with no segment start where the next one does.
  for (int gpu = gpus_ - 1; gpu >= 0; --gpu)
    gpu_offsets_[static_cast<size_t>(gpu)] =
        std::min(gpu_offsets_[static_cast<size_t>(gpu)], gpu_offsets_[static_cast<size_t>(gpu) + 1]);
  endResetModel();
}

std::span<const Segment> TimelineModel::segmentsOf(int gpu) const {
  if (gpu < 0 || gpu >= gpus_) return {};
  const size_t begin = gpu_offsets_[static_cast<size_t>(gpu)], end = gpu_offsets_[static_cast<size_t>(gpu) + 1];
  return {segments_.data() + begin, end - begin};
}

QString TimelineModel::opDetails(int op_index) const {
  if (!result_ || op_index < 0 || op_index >= static_cast<int>(result_->schedule.ops.size())) return {};
  const Schedule& schedule = result_->schedule;
  const Op& op = schedule.ops[static_cast<size_t>(op_index)];
  const double start_s = result_->sim.op_start_s[static_cast<size_t>(op_index)];
  const double finish_s = result_->sim.op_finish_s[static_cast<size_t>(op_index)];
  QString text = QString::fromStdString(schedule.describe(op));
  text += QString("\n%1 pass, %2 – %3 µs (%4 µs)")
              .arg(QString::fromStdString(to_string(op.pass)))
              .arg(start_s * 1e6, 0, 'f', 2)
              .arg(finish_s * 1e6, 0, 'f', 2)
              .arg((finish_s - start_s) * 1e6, 0, 'f', 2);
  if (op.kind == OpKind::compute) {
    QStringList blocks;
    for (const BlockRef& block : schedule.blocks_of(op)) blocks << QString::fromStdString(to_string(block));
    text += "\nblocks: " + blocks.join(", ");
  } else if (op.kind == OpKind::send || op.kind == OpKind::recv || op.kind == OpKind::merge) {
    QStringList items;
    double bytes = 0;
    for (const DataItem& item : schedule.items_of(op)) {
      items << QString::fromStdString(to_string(item));
      bytes += static_cast<double>(item_bytes(schedule, *result_->grid, item));
    }
    text += "\nitems: " + items.join(", ") + " (" + format_bytes(bytes) + ")";
  }
  return text;
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(segments_.size());
}
int TimelineModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(segments_.size()) || index.column() >= ColumnCount) return {};
  const Segment& segment = segments_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case GpuColumn: return segment.gpu;
        case LaneColumn: return lane_name(segment.lane);
        case KindColumn:
          return segment.op < 0 ? QString("wait")
                                : QString::fromStdString(to_string(result_->schedule.ops[static_cast<size_t>(segment.op)].kind));
        case StartColumn: return segment.start_s * 1e6;
        case FinishColumn: return segment.finish_s * 1e6;
        case DescriptionColumn:
          return segment.op < 0 ? QString("exposed wait")
                                : QString::fromStdString(
                                      result_->schedule.describe(result_->schedule.ops[static_cast<size_t>(segment.op)]));
      }
      return {};
    case Qt::ToolTipRole: return segment.op < 0 ? QString("exposed wait") : opDetails(segment.op);
    case GpuRole: return segment.gpu;
    case LaneRole: return static_cast<int>(segment.lane);
    case StartRole: return segment.start_s;
    case FinishRole: return segment.finish_s;
    case OpRole: return segment.op;
    default: return {};
  }
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section;
  static const char* kNames[] = {"GPU", "lane", "kind", "start (µs)", "finish (µs)", "description"};
  return section >= 0 && section < ColumnCount ? QVariant(kNames[section]) : QVariant();
}

}  // namespace tessera::gui
