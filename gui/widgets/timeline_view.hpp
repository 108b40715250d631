#pragma once
// The simulated timeline: one band per GPU in three rows: compute with the exposed waits in
// its gaps, send, receive. The wheel zooms around the pointer, dragging pans, a double click shows the
// whole run again. A vertical line marks the step slider's time; clicking an op reports it.
#include <QWidget>

namespace tessera::gui {

class TimelineModel;

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(TimelineModel* model, QWidget* parent = nullptr);

  void setTime(double time_s);  // the slider's time
  void setSelectedGpu(int gpu);
  void setSelectedOp(int op);  // outlined; -1 for none
  void setVisibleRange(double begin_s, double end_s);  // zoom to [begin, end]
  double visibleBegin_s() const { return begin_s_; }
  double visibleEnd_s() const { return end_s_; }
  QSize sizeHint() const override { return {1000, 700}; }
  // The op drawn at a widget position (-1: none or a wait).
  int opAt(QPointF position) const;
  // Where a segment of (gpu, lane) around time_s is drawn (tests read pixels there); `lane`
  // is a Lane value.
  QPointF positionOf(int gpu, int lane, double time_s) const;

 signals:
  void opClicked(int op);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  double xOf(double time_s) const;
  double timeOf(double x) const;
  double bandHeight() const;
  void resetRange();

  TimelineModel* model_;
  double begin_s_ = 0, end_s_ = 1e-3;
  double time_s_ = 0;
  int selected_gpu_ = -1;
  int selected_op_ = -1;
  bool dragging_ = false;
  double drag_x_ = 0, drag_begin_s_ = 0;
};

}  // namespace tessera::gui
