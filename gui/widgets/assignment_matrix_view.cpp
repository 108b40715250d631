#include "widgets/assignment_matrix_view.hpp"

#include <QHelpEvent>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "models/assignment_matrix_model.hpp"
#include "models/gpu_colors.hpp"

namespace tessera::gui {

namespace {
constexpr int kMargin = 34;        // room for chunk labels and the received / in-flight marks
constexpr int kStatusHeight = 22;  // the line of text under the grid
}  // namespace

AssignmentMatrixView::AssignmentMatrixView(AssignmentMatrixModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  setMouseTracking(true);
  setMinimumSize(200, 200);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
  auto repaint = [this] { update(); };
  connect(model_, &QAbstractItemModel::modelReset, this, repaint);
  connect(model_, &QAbstractItemModel::dataChanged, this, repaint);
}

AssignmentMatrixView::Geometry AssignmentMatrixView::geometry() const {
  Geometry g;
  const int n = std::max(model_->chunks(), 1);
  const int side = std::max(10, std::min(width() - 2 * kMargin, height() - 2 * kMargin - kStatusHeight));
  // Whole pixels per cell when blocks are large, so every block is a crisp square; small
  // blocks use all the room instead (a block may then be a pixel wider than its neighbour).
  g.cell = side >= 4 * n ? std::floor(static_cast<double>(side) / n) : static_cast<double>(side) / n;
  const int grid = static_cast<int>(g.cell * n);
  g.left = (width() - grid) / 2;
  g.top = kMargin + (height() - 2 * kMargin - kStatusHeight - grid) / 2;
  return g;
}

QRect AssignmentMatrixView::cellRect(int q_chunk, int kv_chunk) const {
  const Geometry g = geometry();
  const int x0 = g.left + static_cast<int>(std::round(kv_chunk * g.cell));
  const int y0 = g.top + static_cast<int>(std::round(q_chunk * g.cell));
  const int x1 = g.left + static_cast<int>(std::round((kv_chunk + 1) * g.cell));
  const int y1 = g.top + static_cast<int>(std::round((q_chunk + 1) * g.cell));
  return QRect(QPoint(x0, y0), QPoint(x1 - 1, y1 - 1));
}

bool AssignmentMatrixView::cellAt(QPoint position, int& q_chunk, int& kv_chunk) const {
  const int n = model_->chunks();
  if (n == 0) return false;
  const Geometry g = geometry();
  const double column = (position.x() - g.left) / g.cell, row = (position.y() - g.top) / g.cell;
  if (column < 0 || row < 0 || column >= n || row >= n) return false;
  q_chunk = static_cast<int>(row);
  kv_chunk = static_cast<int>(column);
  return true;
}

void AssignmentMatrixView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const int n = model_->chunks();
  if (n == 0) {
    painter.drawText(rect(), Qt::AlignCenter, "No schedule yet");
    return;
  }
  const Geometry g = geometry();
  const int grid = static_cast<int>(std::round(g.cell * n));
  // One pixel per block, scaled up without smoothing: the cost of a paint stays n^2 pixel
  // writes plus one image draw, even for a thousand GPUs (a million blocks).
  QImage blocks(n, n, QImage::Format_RGB32);
  int done = 0, scheduled = 0;
  for (int q = 0; q < n; ++q) {
    auto* line = reinterpret_cast<QRgb*>(blocks.scanLine(q));
    for (int kv = 0; kv < n; ++kv) {
      line[kv] = model_->cellColor(q, kv).rgb();
      if (model_->owner(q, kv) >= 0) {
        ++scheduled;
        done += model_->isDone(q, kv) ? 1 : 0;
      }
    }
  }
  painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
  painter.drawImage(QRect(g.left, g.top, grid, grid), blocks);
  // Thin separators only when cells are large enough for them to help.
  if (g.cell >= 6) {
    painter.setPen(QPen(QColor(255, 255, 255, 160), 1));
    for (int k = 1; k < n; ++k) {
      const int offset = static_cast<int>(std::round(k * g.cell));
      painter.drawLine(g.left + offset, g.top, g.left + offset, g.top + grid - 1);
      painter.drawLine(g.left, g.top + offset, g.left + grid - 1, g.top + offset);
    }
  }
  painter.setPen(QPen(Qt::darkGray, 1));
  painter.drawRect(g.left - 1, g.top - 1, grid + 1, grid + 1);

  // Chunk labels, thinned out to fit.
  painter.setPen(palette().color(QPalette::Text));
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.75));
  painter.setFont(small);
  // Row labels need a line of height, column labels the width of the widest number.
  const int row_step = std::max(1, static_cast<int>(std::ceil(18.0 / g.cell)));
  const int label_width = painter.fontMetrics().horizontalAdvance(QString::number(n - 1)) + 6;
  const int column_step = std::max(row_step, static_cast<int>(std::ceil(label_width / g.cell)));
  for (int k = 0; k < n; k += row_step) {
    const int centre = static_cast<int>((k + 0.5) * g.cell);
    painter.drawText(QRect(g.left - kMargin, g.top + centre - 8, kMargin - 14, 16), Qt::AlignRight | Qt::AlignVCenter,
                     QString::number(k));
  }
  for (int k = 0; k < n; k += column_step) {
    const int centre = static_cast<int>((k + 0.5) * g.cell);
    painter.drawText(QRect(g.left + centre - label_width / 2, g.top - kMargin, label_width, kMargin - 14),
                     Qt::AlignHCenter | Qt::AlignBottom, QString::number(k));
  }

  // Selected GPU: outline its blocks; mark the Q rows and KV columns it receives.
  const int selected = model_->selectedGpu();
  if (selected >= 0) {
    // Outlines where blocks are big enough to carry one; a dark wash where they are not.
    painter.setPen(QPen(Qt::black, std::max(1.0, std::min(3.0, g.cell / 5))));
    painter.setBrush(Qt::NoBrush);
    for (int q = 0; q < n; ++q)
      for (int kv = 0; kv < n; ++kv)
        if (model_->owner(q, kv) == selected) {
          if (g.cell >= 4)
            painter.drawRect(cellRect(q, kv).adjusted(0, 0, -1, -1));
          else
            painter.fillRect(cellRect(q, kv), QColor(0, 0, 0, 140));
        }
    const QColor mark(20, 20, 20);
    for (int k = 0; k < n; ++k) {
      const QRect row = cellRect(k, 0), column = cellRect(0, k);
      if (model_->receivedRows()[static_cast<size_t>(k)])
        painter.fillRect(QRect(g.left - 12, row.top(), 8, row.height()), mark);
      if (model_->receivedColumns()[static_cast<size_t>(k)])
        painter.fillRect(QRect(column.left(), g.top - 12, column.width(), 8), mark);
    }
  }

  // Chunks in flight at the slider's time: Q-like chunks on the right (by row), KV on the
  // bottom (by column), in the receiving GPU's colour.
  const auto moving = model_->inFlight();
  for (const auto& flight : moving) {
    const bool is_row = flight.item.kind == DataKind::Q || flight.item.kind == DataKind::O ||
                        flight.item.kind == DataKind::LSE || flight.item.kind == DataKind::dO ||
                        flight.item.kind == DataKind::Stats || flight.item.kind == DataKind::dQ;
    const QColor colour = gpu_color(flight.dst);
    if (is_row) {
      const QRect row = cellRect(flight.item.chunk, n - 1);
      painter.fillRect(QRect(g.left + grid + 4, row.top(), 8, row.height()), colour);
    } else {
      const QRect column = cellRect(n - 1, flight.item.chunk);
      painter.fillRect(QRect(column.left(), g.top + grid + 4, column.width(), 8), colour);
    }
  }

  painter.setFont(font());
  painter.setPen(palette().color(QPalette::Text));
  QString status = QString("t = %1 µs: %2 of %3 blocks done, %4 transfers in flight")
                       .arg(model_->time_s() * 1e6, 0, 'f', 1)
                       .arg(done)
                       .arg(scheduled)
                       .arg(moving.size());
  if (selected >= 0) status += QString("; GPU %1 selected (outlined; receives the marked rows and columns)").arg(selected);
  painter.drawText(QRect(0, height() - kStatusHeight, width(), kStatusHeight), Qt::AlignCenter, status);
}

void AssignmentMatrixView::mousePressEvent(QMouseEvent* event) {
  int q = 0, kv = 0;
  const int gpu = cellAt(event->position().toPoint(), q, kv) ? model_->owner(q, kv) : -1;
  model_->setSelectedGpu(gpu);
  emit gpuSelected(model_->selectedGpu());
}

bool AssignmentMatrixView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    int q = 0, kv = 0;
    if (cellAt(help->pos(), q, kv))
      QToolTip::showText(help->globalPos(), model_->data(model_->index(q, kv), Qt::ToolTipRole).toString(), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace tessera::gui
