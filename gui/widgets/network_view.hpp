#pragma once
// The topology drawn in its own shape (network_layout.hpp), links coloured and thickened by
// the bytes routed over them or by their simulated utilisation. GPU vertices carry the colour
// of the schedule rank placed on them (as in the matrix); switches, NICs are grey squares.
// Tooltips give each link's figures; the selected GPU is ringed.
#include <QWidget>

#include "models/network_layout.hpp"

namespace tessera::gui {

class LinkTableModel;

class NetworkView : public QWidget {
  Q_OBJECT
 public:
  enum class Metric { bytes, utilization };
  explicit NetworkView(LinkTableModel* model, QWidget* parent = nullptr);

  void setMetric(Metric metric);
  Metric metric() const { return metric_; }
  void setSelectedGpu(int rank);  // a schedule rank, -1 for none
  QSize sizeHint() const override { return {900, 700}; }
  // Widget position of a vertex (tests and tooltips).
  QPointF vertexPosition(int vertex) const;
  int edgeAt(QPointF position) const;  // -1 when no link is near

 signals:
  void gpuSelected(int rank);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void relayout();
  double edgeValue(int edge) const;
  double maxValue() const;
  QPointF edgeOffset(int edge) const;
  int vertexAt(QPointF position) const;

  LinkTableModel* model_;
  NetworkLayout layout_;
  Metric metric_ = Metric::bytes;
  int selected_rank_ = -1;
};

}  // namespace tessera::gui
