#include "models/assignment_matrix_model.hpp"

#include <algorithm>

#include "models/gpu_colors.hpp"

namespace tessera::gui {

namespace {

QString format_time_us(double seconds) { return QString::number(seconds * 1e6, 'f', 1) + " µs"; }

}  // namespace

AssignmentMatrixModel::AssignmentMatrixModel(QObject* parent) : QAbstractTableModel(parent) {}

void AssignmentMatrixModel::setResult(std::shared_ptr<const ScenarioResult> result) {
  beginResetModel();
  result_ = std::move(result);
  chunks_ = result_ ? result_->schedule.chunks() : 0;
  if (result_ && head_group_ >= result_->schedule.head_groups) head_group_ = 0;
  if (result_ && selected_gpu_ >= result_->schedule.gpus) selected_gpu_ = -1;
  rebuild();
  rebuildSelection();
  endResetModel();
}

void AssignmentMatrixModel::setHeadGroup(int head_group) {
  if (!result_ || head_group < 0 || head_group >= result_->schedule.head_groups || head_group == head_group_) return;
  beginResetModel();
  head_group_ = head_group;
  rebuild();
  rebuildSelection();
  endResetModel();
}

void AssignmentMatrixModel::setSelectedGpu(int gpu) {
  if (result_ && (gpu < -1 || gpu >= result_->schedule.gpus)) gpu = -1;
  if (gpu == selected_gpu_) return;
  selected_gpu_ = gpu;
  rebuildSelection();
  if (chunks_ > 0) emit dataChanged(index(0, 0), index(chunks_ - 1, chunks_ - 1));
}

void AssignmentMatrixModel::setTime(double time_s) {
  if (time_s == time_s_) return;
  time_s_ = time_s;
  if (chunks_ > 0) emit dataChanged(index(0, 0), index(chunks_ - 1, chunks_ - 1));
}

void AssignmentMatrixModel::rebuild() {
  cells_.assign(static_cast<size_t>(chunks_) * static_cast<size_t>(chunks_), Cell{});
  if (!result_) return;
  const Schedule& schedule = result_->schedule;
  const sim::SimResult& sim = result_->sim;
  for (int q = 0; q < chunks_; ++q)
    for (int kv = 0; kv < chunks_; ++kv)
      cells_[static_cast<size_t>(q) * static_cast<size_t>(chunks_) + static_cast<size_t>(kv)].pairs =
          result_->grid->pairs(q, kv);
  for (size_t op_index = 0; op_index < schedule.ops.size(); ++op_index) {
    const Op& op = schedule.ops[op_index];
    if (op.kind != OpKind::compute) continue;
    const double start_s = op_index < sim.op_start_s.size() ? sim.op_start_s[op_index] : 0;
    const double finish_s = op_index < sim.op_finish_s.size() ? sim.op_finish_s[op_index] : 0;
    for (const BlockRef& block : schedule.blocks_of(op)) {
      if (block.head_group != head_group_) continue;
      Cell& target = cells_[static_cast<size_t>(block.q_chunk) * static_cast<size_t>(chunks_) +
                            static_cast<size_t>(block.kv_chunk)];
      if (op.pass == Pass::forward) {
        target.owner = op.gpu;
        target.start_s = start_s;
        target.finish_s = finish_s;
      } else {
        target.backward_owner = op.gpu;
        target.backward_start_s = start_s;
        target.backward_finish_s = finish_s;
      }
    }
  }
  // A backward-only run has no forward ops: its backward op is the block's owner and time.
  for (Cell& target : cells_)
    if (target.owner < 0 && target.backward_owner >= 0) {
      target.owner = target.backward_owner;
      target.start_s = target.backward_start_s;
      target.finish_s = target.backward_finish_s;
    }
}

void AssignmentMatrixModel::rebuildSelection() {
  received_rows_.assign(static_cast<size_t>(chunks_), false);
  received_columns_.assign(static_cast<size_t>(chunks_), false);
  if (!result_ || selected_gpu_ < 0) return;
  const Schedule& schedule = result_->schedule;
  for (const Op& op : schedule.ops) {
    if (op.gpu != selected_gpu_ || op.kind != OpKind::recv) continue;
    for (const DataItem& item : schedule.items_of(op)) {
      if (item.head_group != head_group_) continue;
      if (item.kind == DataKind::Q || item.kind == DataKind::dO || item.kind == DataKind::Stats)
        received_rows_[static_cast<size_t>(item.chunk)] = true;
      if (item.kind == DataKind::KV) received_columns_[static_cast<size_t>(item.chunk)] = true;
    }
  }
  // Collectives (all-gather, all-to-all) bring chunks too: the transfers into this GPU.
  for (const Collective& collective : schedule.collectives)
    for (const Transfer& transfer : collective.transfers) {
      if (transfer.dst != selected_gpu_) continue;
      for (const DataItem& item : schedule.items_of(transfer)) {
        if (item.head_group != head_group_) continue;
        if (item.kind == DataKind::Q || item.kind == DataKind::dO || item.kind == DataKind::Stats)
          received_rows_[static_cast<size_t>(item.chunk)] = true;
        if (item.kind == DataKind::KV) received_columns_[static_cast<size_t>(item.chunk)] = true;
      }
    }
}

int AssignmentMatrixModel::owner(int q_chunk, int kv_chunk) const { return cell(q_chunk, kv_chunk).owner; }

bool AssignmentMatrixModel::isDone(int q_chunk, int kv_chunk) const {
  const Cell& target = cell(q_chunk, kv_chunk);
  return target.owner >= 0 && target.finish_s <= time_s_;
}

QColor AssignmentMatrixModel::cellColor(int q_chunk, int kv_chunk) const {
  const Cell& target = cell(q_chunk, kv_chunk);
  if (target.owner < 0) return masked_color();
  const QColor colour = gpu_color(target.owner);
  return isDone(q_chunk, kv_chunk) ? colour : pending_color(colour);
}

std::vector<AssignmentMatrixModel::InFlight> AssignmentMatrixModel::inFlight() const {
  std::vector<InFlight> moving;
  if (!result_) return moving;
  const Schedule& schedule = result_->schedule;
  const sim::SimResult& sim = result_->sim;
  for (size_t op_index = 0; op_index < schedule.ops.size() && op_index < sim.op_start_s.size(); ++op_index) {
    const Op& op = schedule.ops[op_index];
    if (op.kind != OpKind::recv) continue;
    if (!(sim.op_start_s[op_index] <= time_s_ && time_s_ < sim.op_finish_s[op_index])) continue;
    for (const DataItem& item : schedule.items_of(op))
      if (item.head_group == head_group_) moving.push_back(InFlight{item, op.peer, op.gpu});
  }
  return moving;
}

int AssignmentMatrixModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : chunks_; }
int AssignmentMatrixModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : chunks_; }

QString AssignmentMatrixModel::toolTip(int q, int kv) const {
  const Cell& target = cell(q, kv);
  QString text = QString("Block (Q %1, KV %2)").arg(q).arg(kv);
  if (result_ && result_->schedule.head_groups > 1) text += QString(", head group %1").arg(head_group_);
  if (target.owner < 0) return text + "\nmasked: no work, never scheduled";
  text += QString("\nGPU %1").arg(target.owner);
  text += QString("\nwork: %1 (query, key) pairs per head").arg(target.pairs);
  text += QString("\nruns %1 – %2").arg(format_time_us(target.start_s), format_time_us(target.finish_s));
  if (target.backward_owner >= 0 && target.backward_finish_s != target.finish_s)
    text += QString("\nbackward on GPU %1: %2 – %3")
                .arg(target.backward_owner)
                .arg(format_time_us(target.backward_start_s), format_time_us(target.backward_finish_s));
  return text;
}

QVariant AssignmentMatrixModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= chunks_ || index.column() >= chunks_) return {};
  const int q = index.row(), kv = index.column();
  const Cell& target = cell(q, kv);
  switch (role) {
    case Qt::DisplayRole: return target.owner >= 0 ? QVariant(target.owner) : QVariant(QString());
    case Qt::ToolTipRole: return toolTip(q, kv);
    case Qt::BackgroundRole: return cellColor(q, kv);
    case OwnerGpuRole: return target.owner;
    case WorkPairsRole: return static_cast<qlonglong>(target.pairs);
    case StartRole: return target.start_s;
    case FinishRole: return target.finish_s;
    case DoneRole: return isDone(q, kv);
    case SelectedTileRole: return selected_gpu_ >= 0 && target.owner == selected_gpu_;
    case ReceivedRole:
      return received_rows_[static_cast<size_t>(q)] || received_columns_[static_cast<size_t>(kv)];
    default: return {};
  }
}

QVariant AssignmentMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (section < 0 || section >= chunks_) return {};
  if (role == Qt::DisplayRole) return section;
  if (role == Qt::ToolTipRole)
    return orientation == Qt::Vertical ? QString("query chunk %1").arg(section)
                                       : QString("key/value chunk %1").arg(section);
  return {};
}

}  // namespace tessera::gui
