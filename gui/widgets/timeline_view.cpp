#include "widgets/timeline_view.hpp"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "models/gpu_colors.hpp"
#include "models/timeline_model.hpp"

namespace tessera::gui {

namespace {

constexpr int kLabelWidth = 56;  // "GPU 63"
constexpr int kAxisHeight = 22;
constexpr int kLegendHeight = 20;
// Waits are the gaps of the compute lane, so they share its row: three rows per GPU.
constexpr int kRows = 3;
int row_of(Lane lane) {
  switch (lane) {
    case Lane::compute:
    case Lane::wait: return 0;
    case Lane::send: return 1;
    case Lane::receive: return 2;
  }
  return 0;
}

QColor lane_color(Lane lane, int gpu) {
  switch (lane) {
    case Lane::compute: return gpu_color(gpu);
    case Lane::send: return QColor(60, 110, 200);
    case Lane::receive: return QColor(40, 160, 90);
    case Lane::wait: return QColor(235, 120, 120);
  }
  return Qt::gray;
}

// A tick step of 1, 2 or 5 times a power of ten giving about `ticks` ticks over `span`.
double nice_step(double span, int ticks) {
  const double raw = span / std::max(ticks, 1);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (raw <= factor * power) return factor * power;
  return 10 * power;
}

}  // namespace

TimelineView::TimelineView(TimelineModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  setMouseTracking(true);
  setMinimumSize(300, 200);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    selected_op_ = -1;
    resetRange();
    update();
  });
}

void TimelineView::resetRange() {
  begin_s_ = 0;
  end_s_ = model_->makespan_s() > 0 ? model_->makespan_s() * 1.02 : 1e-3;
}

void TimelineView::setTime(double time_s) {
  time_s_ = time_s;
  // Keep the cursor in view when zoomed in: pan to it.
  if (time_s_ < begin_s_ || time_s_ > end_s_) {
    const double span = end_s_ - begin_s_;
    begin_s_ = std::max(0.0, time_s_ - span / 2);
    end_s_ = begin_s_ + span;
  }
  update();
}

void TimelineView::setSelectedGpu(int gpu) {
  selected_gpu_ = gpu;
  update();
}

void TimelineView::setSelectedOp(int op) {
  selected_op_ = op;
  update();
}

void TimelineView::setVisibleRange(double begin_s, double end_s) {
  if (!(end_s > begin_s)) return;
  begin_s_ = begin_s;
  end_s_ = end_s;
  update();
}

double TimelineView::xOf(double time_s) const {
  return kLabelWidth + (time_s - begin_s_) / (end_s_ - begin_s_) * (width() - kLabelWidth - 8);
}
double TimelineView::timeOf(double x) const {
  return begin_s_ + (x - kLabelWidth) / std::max(1.0, width() - kLabelWidth - 8.0) * (end_s_ - begin_s_);
}
double TimelineView::bandHeight() const {
  return static_cast<double>(height() - kAxisHeight - kLegendHeight) / std::max(model_->gpus(), 1);
}

QPointF TimelineView::positionOf(int gpu, int lane, double time_s) const {
  const double band = bandHeight();
  return QPointF(xOf(time_s), kAxisHeight + gpu * band + (row_of(static_cast<Lane>(lane)) + 0.5) * band / kRows);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const int gpus = model_->gpus();
  if (gpus == 0) {
    painter.drawText(rect(), Qt::AlignCenter, "No simulation yet");
    return;
  }
  const double band = bandHeight();
  const double lane_height = band / kRows;
  const double right = width() - 8;
  // Time axis.
  painter.setPen(palette().color(QPalette::Text));
  const double step = nice_step(end_s_ - begin_s_, std::max(2, (width() - kLabelWidth) / 110));
  const bool in_ms = end_s_ - begin_s_ >= 2e-3;
  for (double t = std::ceil(begin_s_ / step) * step; t <= end_s_; t += step) {
    const double x = xOf(t);
    painter.setPen(QColor(220, 220, 220));
    painter.drawLine(QPointF(x, kAxisHeight), QPointF(x, height() - kLegendHeight));
    painter.setPen(palette().color(QPalette::Text));
    const QString label = in_ms ? QString::number(t * 1e3, 'g', 4) + " ms" : QString::number(t * 1e6, 'g', 4) + " µs";
    painter.drawText(QRectF(x - 50, 2, 100, kAxisHeight - 4), Qt::AlignCenter, label);
  }
  // Lanes. Segments narrower than a pixel still get one pixel, so short ops stay visible.
  painter.setClipRect(QRectF(kLabelWidth, kAxisHeight, right - kLabelWidth, height() - kAxisHeight - kLegendHeight));
  for (int gpu = 0; gpu < gpus; ++gpu) {
    const double top = kAxisHeight + gpu * band;
    // Alternate bands tell the GPUs apart when lanes are only a few pixels high.
    if (gpu == selected_gpu_)
      painter.fillRect(QRectF(kLabelWidth, top, right - kLabelWidth, band), QColor(255, 240, 160));
    else if (gpu % 2 == 1)
      painter.fillRect(QRectF(kLabelWidth, top, right - kLabelWidth, band), QColor(238, 240, 245));
    // Zoomed out, thousands of ops fall on one pixel: per lane, skip a segment that lies
    // entirely inside the pixels already filled.
    double filled_until_x[kLaneCount] = {-1, -1, -1, -1};
    for (const Segment& segment : model_->segmentsOf(gpu)) {
      if (segment.finish_s < begin_s_ || segment.start_s > end_s_) continue;
      const double x0 = xOf(segment.start_s), x1 = std::max(xOf(segment.finish_s), x0 + 1.0);
      double& filled = filled_until_x[static_cast<int>(segment.lane)];
      if (x1 <= filled) continue;
      filled = std::ceil(x1);
      const double y = top + row_of(segment.lane) * lane_height;
      painter.fillRect(QRectF(x0, y + 0.5, x1 - x0, std::max(1.0, lane_height - 1.0)), lane_color(segment.lane, gpu));
    }
  }
  // The clicked op, outlined in every lane it occupies.
  if (selected_op_ >= 0 && model_->result() &&
      selected_op_ < static_cast<int>(model_->result()->schedule.ops.size())) {
    const int gpu = model_->result()->schedule.ops[static_cast<size_t>(selected_op_)].gpu;
    painter.setPen(QPen(Qt::black, 2));
    painter.setBrush(Qt::NoBrush);
    for (const Segment& segment : model_->segmentsOf(gpu))
      if (segment.op == selected_op_) {
        const double x0 = xOf(segment.start_s), x1 = std::max(xOf(segment.finish_s), x0 + 1.0);
        const double y = kAxisHeight + gpu * band + row_of(segment.lane) * lane_height;
        painter.drawRect(QRectF(x0 - 1, y - 1, x1 - x0 + 2, lane_height + 1));
      }
  }
  painter.setClipping(false);
  // GPU labels, thinned out to fit.
  painter.setPen(palette().color(QPalette::Text));
  const int label_step = std::max(1, static_cast<int>(std::ceil(14.0 / band)));
  for (int gpu = 0; gpu < gpus; gpu += label_step)
    painter.drawText(QRectF(0, kAxisHeight + gpu * band, kLabelWidth - 6, std::max(band, 14.0)),
                     Qt::AlignRight | Qt::AlignTop, QString("GPU %1").arg(gpu));
  // The slider's time.
  if (time_s_ >= begin_s_ && time_s_ <= end_s_) {
    painter.setPen(QPen(Qt::black, 1.5));
    painter.drawLine(QPointF(xOf(time_s_), kAxisHeight), QPointF(xOf(time_s_), height() - kLegendHeight));
  }
  // Legend.
  double x = kLabelWidth;
  const double y = height() - kLegendHeight + 4;
  for (int lane = 0; lane < kLaneCount; ++lane) {
    painter.fillRect(QRectF(x, y + 2, 12, 10), lane == 0 ? QColor(150, 150, 150) : lane_color(static_cast<Lane>(lane), 0));
    const QString name = lane == 0 ? "compute (GPU colour)" : lane_name(static_cast<Lane>(lane));
    painter.drawText(QRectF(x + 16, y - 2, 160, kLegendHeight), Qt::AlignLeft | Qt::AlignTop, name);
    x += 16 + painter.fontMetrics().horizontalAdvance(name) + 20;
  }
  painter.drawText(QRectF(x, y - 2, width() - x, kLegendHeight), Qt::AlignLeft | Qt::AlignTop,
                   "per GPU: compute (and waits), send, receive; wheel: zoom, drag: pan, double click: all");
}

int TimelineView::opAt(QPointF position) const {
  const int gpus = model_->gpus();
  if (gpus == 0 || position.x() < kLabelWidth) return -1;
  const double band = bandHeight();
  const int gpu = static_cast<int>((position.y() - kAxisHeight) / band);
  if (position.y() < kAxisHeight || gpu < 0 || gpu >= gpus) return -1;
  const int row = static_cast<int>((position.y() - kAxisHeight - gpu * band) / (band / kRows));
  const double time_s = timeOf(position.x());
  const double pixel_s = (end_s_ - begin_s_) / std::max(1, width() - kLabelWidth);  // one-pixel tolerance
  for (const Segment& segment : model_->segmentsOf(gpu))
    if (row_of(segment.lane) == row && segment.start_s - pixel_s <= time_s &&
        time_s <= segment.finish_s + pixel_s)
      return segment.op;
  return -1;
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double anchor_s = timeOf(event->position().x());
  const double factor = std::pow(0.8, event->angleDelta().y() / 120.0);
  const double span = std::clamp((end_s_ - begin_s_) * factor, 1e-9, std::max(model_->makespan_s() * 2, 1e-6));
  const double fraction = (anchor_s - begin_s_) / (end_s_ - begin_s_);
  begin_s_ = std::max(0.0, anchor_s - fraction * span);
  end_s_ = begin_s_ + span;
  update();
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  dragging_ = true;
  drag_x_ = event->position().x();
  drag_begin_s_ = begin_s_;
  const int op = opAt(event->position());
  if (op >= 0) {
    setSelectedOp(op);
    emit opClicked(op);
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_ || !(event->buttons() & Qt::LeftButton)) return;
  const double span = end_s_ - begin_s_;
  const double shift_s = (event->position().x() - drag_x_) / std::max(1, width() - kLabelWidth) * span;
  begin_s_ = std::max(0.0, drag_begin_s_ - shift_s);
  end_s_ = begin_s_ + span;
  update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent*) { dragging_ = false; }

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) {
  resetRange();
  update();
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int op = opAt(help->pos());
    if (op >= 0)
      QToolTip::showText(help->globalPos(), model_->opDetails(op), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace tessera::gui
