#include "widgets/network_view.hpp"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "models/gpu_colors.hpp"
#include "models/link_table_model.hpp"

namespace tessera::gui {

namespace {

constexpr double kMargin = 24;
constexpr int kLegendHeight = 24;

// Light blue (idle) to dark red (the busiest link).
QColor heat_color(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const QColor cold(170, 195, 225), hot(200, 30, 30);
  return QColor(static_cast<int>(cold.red() + (hot.red() - cold.red()) * fraction),
                static_cast<int>(cold.green() + (hot.green() - cold.green()) * fraction),
                static_cast<int>(cold.blue() + (hot.blue() - cold.blue()) * fraction));
}

double distance_to_segment(QPointF p, QPointF a, QPointF b) {
  const QPointF ab = b - a;
  const double length2 = QPointF::dotProduct(ab, ab);
  const double t = length2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / length2, 0.0, 1.0) : 0.0;
  const QPointF nearest = a + t * ab;
  return std::hypot(p.x() - nearest.x(), p.y() - nearest.y());
}

}  // namespace

NetworkView::NetworkView(LinkTableModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  setMouseTracking(true);
  setMinimumSize(200, 200);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    relayout();
    update();
  });
}

void NetworkView::relayout() {
  layout_ = model_->result() ? layout_network(model_->result()->topology) : NetworkLayout{};
}

void NetworkView::setMetric(Metric metric) {
  metric_ = metric;
  update();
}

void NetworkView::setSelectedGpu(int rank) {
  selected_rank_ = rank;
  update();
}

QPointF NetworkView::vertexPosition(int vertex) const {
  const QPointF unit = layout_.vertex_positions[static_cast<size_t>(vertex)];
  return QPointF(kMargin + unit.x() * (width() - 2 * kMargin),
                 kMargin + unit.y() * (height() - 2 * kMargin - kLegendHeight));
}

double NetworkView::edgeValue(int edge) const {
  return metric_ == Metric::bytes ? model_->bytes(edge) : model_->utilization(edge);
}

double NetworkView::maxValue() const {
  return metric_ == Metric::bytes ? model_->maxBytes() : model_->maxUtilization();
}

// The two directions of a cable are drawn side by side, each shifted to its right.
QPointF NetworkView::edgeOffset(int edge) const {
  const topo::Topology& topology = model_->result()->topology;
  const QPointF a = vertexPosition(topology.link_source(edge));
  const QPointF b = vertexPosition(topology.link_target(edge));
  const QPointF d = b - a;
  const double length = std::hypot(d.x(), d.y());
  if (length == 0) return {};
  return QPointF(-d.y() / length, d.x() / length) * 2.0;
}

void NetworkView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const ScenarioResult* result = model_->result();
  if (!result || layout_.vertex_positions.empty()) {
    painter.drawText(rect(), Qt::AlignCenter, "No network yet");
    return;
  }
  const topo::Topology& topology = result->topology;
  const double max_value = maxValue();
  const int edges = topology.link_count();
  // Quiet links first, busy ones on top.
  std::vector<int> order(static_cast<size_t>(edges));
  for (int edge = 0; edge < edges; ++edge) order[static_cast<size_t>(edge)] = edge;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return edgeValue(a) < edgeValue(b); });
  const double unit = std::min(width(), height()) / 100.0;
  for (int edge : order) {
    const double fraction = max_value > 0 ? edgeValue(edge) / max_value : 0.0;
    const QPointF offset = edgeOffset(edge);
    const QPointF a = vertexPosition(topology.link_source(edge)) + offset;
    const QPointF b = vertexPosition(topology.link_target(edge)) + offset;
    painter.setPen(QPen(heat_color(fraction), 0.6 + fraction * std::max(2.0, unit * 0.9), Qt::SolidLine, Qt::RoundCap));
    const QPointF d = b - a;
    const double length = std::hypot(d.x(), d.y());
    // Wrap-around links of rings and tori would cross the drawing: bend them outwards.
    if (layout_.curved_edges && length > 0.45 * std::min(width(), height())) {
      QPainterPath path(a);
      const QPointF middle = (a + b) / 2;
      const QPointF centre(width() / 2.0, height() / 2.0);
      QPointF outward = middle - centre;
      const double outward_length = std::hypot(outward.x(), outward.y());
      outward = outward_length > 1 ? outward / outward_length : QPointF(-d.y() / length, d.x() / length);
      path.quadTo(middle + outward * 0.18 * length, b);
      painter.drawPath(path);
    } else {
      painter.drawLine(a, b);
    }
  }
  // Vertices.
  std::vector<int> rank_of_gpu(static_cast<size_t>(topology.gpu_count()), -1);
  for (size_t rank = 0; rank < result->placement.size(); ++rank)
    rank_of_gpu[static_cast<size_t>(result->placement[rank])] = static_cast<int>(rank);
  const double radius = std::clamp(unit * 1.1, 3.0, 12.0);
  for (int32_t vertex = 0; vertex < topology.vertex_count(); ++vertex) {
    const topo::VertexInfo& info = topology.vertex(vertex);
    const QPointF p = vertexPosition(vertex);
    if (info.kind == topo::VertexKind::gpu) {
      const int rank = rank_of_gpu[static_cast<size_t>(info.gpu)];
      painter.setPen(QPen(Qt::black, 0.5));
      painter.setBrush(rank >= 0 ? gpu_color(rank) : masked_color());
      painter.drawEllipse(p, radius, radius);
      if (rank >= 0 && rank == selected_rank_) {
        painter.setPen(QPen(Qt::black, 2.5));
        painter.setBrush(Qt::NoBrush);
        painter.drawEllipse(p, radius + 4, radius + 4);
      }
    } else {
      painter.setPen(QPen(Qt::black, 0.5));
      painter.setBrush(QColor(120, 120, 120));
      painter.drawRect(QRectF(p.x() - radius * 0.8, p.y() - radius * 0.8, radius * 1.6, radius * 1.6));
    }
  }
  // Legend.
  painter.setPen(palette().color(QPalette::Text));
  const QString what = metric_ == Metric::bytes ? "bytes routed per link direction" : "link utilisation";
  const QString peak = metric_ == Metric::bytes ? format_bytes(max_value) : QString::number(100 * max_value, 'f', 1) + " %";
  painter.drawText(QRect(0, height() - kLegendHeight, width(), kLegendHeight), Qt::AlignCenter,
                   QString("%1 (%2, placement %3): colour and width by %4, busiest %5")
                       .arg(QString::fromStdString(topology.name))
                       .arg(topology.gpu_count())
                       .arg(QString::fromStdString(result->session.network.placement), what, peak));
}

int NetworkView::edgeAt(QPointF position) const {
  const ScenarioResult* result = model_->result();
  if (!result) return -1;
  const topo::Topology& topology = result->topology;
  int best = -1;
  double best_distance = 5.0;  // pixels
  for (int edge = 0; edge < topology.link_count(); ++edge) {
    const QPointF offset = edgeOffset(edge);
    const double distance = distance_to_segment(position, vertexPosition(topology.link_source(edge)) + offset,
                                                vertexPosition(topology.link_target(edge)) + offset);
    if (distance < best_distance) {
      best_distance = distance;
      best = edge;
    }
  }
  return best;
}

int NetworkView::vertexAt(QPointF position) const {
  const ScenarioResult* result = model_->result();
  if (!result) return -1;
  const double radius = std::clamp(std::min(width(), height()) / 100.0 * 1.1, 3.0, 12.0) + 2;
  for (size_t vertex = 0; vertex < layout_.vertex_positions.size(); ++vertex) {
    const QPointF d = vertexPosition(static_cast<int>(vertex)) - position;
    if (std::hypot(d.x(), d.y()) <= radius) return static_cast<int>(vertex);
  }
  return -1;
}

void NetworkView::mousePressEvent(QMouseEvent* event) {
  const ScenarioResult* result = model_->result();
  const int vertex = vertexAt(event->position());
  int rank = -1;
  if (result && vertex >= 0 && result->topology.vertex(vertex).kind == topo::VertexKind::gpu) {
    const int gpu = result->topology.vertex(vertex).gpu;
    for (size_t r = 0; r < result->placement.size(); ++r)
      if (result->placement[r] == gpu) rank = static_cast<int>(r);
  }
  setSelectedGpu(rank);
  emit gpuSelected(rank);
}

bool NetworkView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const ScenarioResult* result = model_->result();
    const int vertex = vertexAt(help->pos());
    QString text;
    if (result && vertex >= 0) {
      const topo::VertexInfo& info = result->topology.vertex(vertex);
      text = QString::fromStdString(info.name + " (" + topo::to_string(info.kind) + ")");
      if (info.kind == topo::VertexKind::gpu)
        for (size_t rank = 0; rank < result->placement.size(); ++rank)
          if (result->placement[rank] == info.gpu) text += QString("\nschedule rank %1").arg(rank);
    } else if (const int edge = edgeAt(help->pos()); edge >= 0) {
      text = model_->toolTip(edge);
    }
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace tessera::gui
