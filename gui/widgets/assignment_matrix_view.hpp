#pragma once
// The assignment matrix drawn as an n x n grid of blocks coloured by the GPU that computes
// them: row i = query chunk, column j = key/value chunk, masked blocks grey. At the slider's
// time, blocks not yet done are washed out and the chunks in flight are marked in the right
// and bottom margins (in the receiving GPU's colour). Clicking a block selects its GPU:
// its tile is outlined and the rows (Q) and columns (KV) it receives are marked on the left
// and top.
#include <QRect>
#include <QWidget>

namespace tessera::gui {

class AssignmentMatrixModel;

class AssignmentMatrixView : public QWidget {
  Q_OBJECT
 public:
  explicit AssignmentMatrixView(AssignmentMatrixModel* model, QWidget* parent = nullptr);

  // Where block (q_chunk, kv_chunk) is drawn, in widget coordinates (tests read pixels there).
  QRect cellRect(int q_chunk, int kv_chunk) const;
  QSize sizeHint() const override { return {720, 720}; }

 signals:
  void gpuSelected(int gpu);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Geometry {
    int left = 0, top = 0;  // origin of the grid
    double cell = 0;        // cell side in pixels
  };
  Geometry geometry() const;
  bool cellAt(QPoint position, int& q_chunk, int& kv_chunk) const;

  AssignmentMatrixModel* model_;
};

}  // namespace tessera::gui
