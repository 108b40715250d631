// The main window under the offscreen platform: open it, set parameters, run a simulation,
// and check that every view rendered what the schedule definition says (pixels of the
// matrix at known blocks, the network's GPU vertices, the timeline's lanes, the charts).
// Waiting is on signals (QSignalSpy::wait), never on sleeps.
#include <QApplication>
#include <QEventLoop>
#include <QTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <catch2/catch.hpp>

#include <set>

#include "app/main_window.hpp"
#include "app/parameter_panel.hpp"
#include "app/simulation_runner.hpp"
#include "gui_test_support.hpp"
#include "models/assignment_matrix_model.hpp"
#include "models/gpu_colors.hpp"
#include "models/timeline_model.hpp"
#include "plots/charts.hpp"
#include "widgets/assignment_matrix_view.hpp"
#include "widgets/compare_view.hpp"
#include "widgets/network_view.hpp"
#include "widgets/timeline_view.hpp"

using namespace tessera;
using namespace tessera::gui;

namespace {

constexpr int kRunTimeoutMs = 60000;  // a bound for a hung worker, not a timing assumption

// Types the small ring scenario into the panel, field by field, as a user would.
void type_small_ring(ParameterPanel* panel) {
  const Session session = test::small_session(4, "ring", "ring-4");
  const std::pair<const char*, std::string> fields[] = {
      {"gpus", session.problem.gpus},     {"seq", session.problem.seq},         {"heads", session.problem.heads},
      {"kv_heads", session.problem.kv_heads}, {"head_dim", session.problem.head_dim}, {"mask", session.problem.mask},
      {"layout", session.problem.layout}, {"pass", session.problem.pass},       {"algorithm", "ring"},
      {"tile", ""},                       {"topology", "ring-4"},               {"placement", "linear"}};
  for (const auto& [name, value] : fields) REQUIRE(panel->setField(name, QString::fromStdString(value)));
}

// Runs the panel's parameters and returns when the run is shown (true) or has failed (false).
bool run_and_wait(MainWindow& window) {
  QSignalSpy shown(&window, &MainWindow::resultShown);
  QSignalSpy failed(&window, &MainWindow::runFailed);
  QEventLoop loop;
  QObject::connect(&window, &MainWindow::resultShown, &loop, &QEventLoop::quit);
  QObject::connect(&window, &MainWindow::runFailed, &loop, &QEventLoop::quit);
  QTimer::singleShot(kRunTimeoutMs, &loop, &QEventLoop::quit);
  window.runNow();
  if (shown.count() == 0 && failed.count() == 0) loop.exec();
  REQUIRE(shown.count() + failed.count() == 1);  // neither: the worker hung
  return shown.count() == 1;
}

QRgb rgb(const QColor& colour) { return colour.rgb(); }

}  // namespace

TEST_CASE("gui::MainWindow: set parameters, run, and every view renders the schedule", "[gui][window]") {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  type_small_ring(window.parameterPanel());
  REQUIRE(run_and_wait(window));
  REQUIRE(window.messageText().isEmpty());
  const auto result = window.result();
  REQUIRE(result->schedule.algorithm == "ring");
  CHECK(window.statusText().contains("ring"));

  SECTION("matrix: block (i, j) has GPU i's colour (ring, contiguous, full mask)") {
    window.showView("matrix");
    const QImage image = window.matrixView()->grab().toImage();
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const QPoint centre = window.matrixView()->cellRect(i, j).center();
        INFO("block (" << i << ", " << j << ")");
        CHECK(image.pixel(centre) == rgb(gpu_color(i)));
      }
    // The slider at 0: nothing is done, every block is washed out.
    window.setStep(0);
    const QImage start = window.matrixView()->grab().toImage();
    CHECK(start.pixel(window.matrixView()->cellRect(3, 0).center()) == rgb(pending_color(gpu_color(3))));
    window.setStep(MainWindow::kSteps);
  }

  SECTION("play: restarts at 0 and moves the step forward, blocks done never decrease") {
    QPushButton* play = nullptr;
    for (QPushButton* button : window.findChildren<QPushButton*>())
      if (button->text() == "Play") play = button;
    QSlider* slider = window.findChild<QSlider*>();
    REQUIRE(play != nullptr);
    REQUIRE(slider != nullptr);
    REQUIRE(slider->value() == MainWindow::kSteps);
    play->click();
    CHECK(slider->value() == 0);
    CHECK(play->text() == "Pause");
    auto done_blocks = [&] {
      int done = 0;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) done += window.matrixModel()->isDone(i, j) ? 1 : 0;
      return done;
    };
    int previous_step = 0, previous_done = done_blocks();
    QSignalSpy moved(slider, &QSlider::valueChanged);
    for (int frame = 0; frame < 5; ++frame) {
      REQUIRE(moved.wait(kRunTimeoutMs));
      CHECK(slider->value() > previous_step);
      CHECK(done_blocks() >= previous_done);
      CHECK(window.matrixModel()->time_s() == Approx(result->sim.makespan_s * slider->value() / MainWindow::kSteps));
      previous_step = slider->value();
      previous_done = done_blocks();
    }
    play->click();
    CHECK(play->text() == "Play");
  }

  SECTION("matrix: clicking a block selects its GPU in every view") {
    window.showView("matrix");
    const QRect cell = window.matrixView()->cellRect(2, 0);
    QSignalSpy selected(window.matrixView(), &AssignmentMatrixView::gpuSelected);
    QMouseEvent press(QEvent::MouseButtonPress, cell.center(), window.matrixView()->mapToGlobal(cell.center()),
                      Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.matrixView(), &press);
    REQUIRE(selected.count() == 1);
    CHECK(selected.at(0).at(0).toInt() == 2);
    CHECK(window.matrixModel()->selectedGpu() == 2);
    // GPU 2 receives KV chunks 0, 1, 3: the columns are marked in the top margin (black).
    const QImage image = window.matrixView()->grab().toImage();
    const QRect column = window.matrixView()->cellRect(0, 1), own = window.matrixView()->cellRect(0, 2);
    CHECK(image.pixel(column.center().x(), column.top() - 8) == qRgb(20, 20, 20));
    CHECK(image.pixel(own.center().x(), own.top() - 8) != qRgb(20, 20, 20));
  }

  SECTION("network: the ring's GPU vertices in their ranks' colours, busy links drawn") {
    window.showView("network");
    NetworkView* view = window.networkView();
    const QImage image = view->grab().toImage();
    std::set<QRgb> colours;
    for (int gpu = 0; gpu < 4; ++gpu) {
      const QPointF p = view->vertexPosition(result->topology.gpu_vertex(gpu));
      CHECK(image.pixel(p.toPoint()) == rgb(gpu_color(gpu)));  // linear placement: rank = GPU
      colours.insert(image.pixel(p.toPoint()));
    }
    CHECK(colours.size() == 4);
    // Somewhere between GPU 0 and GPU 1 a link is drawn (not the background).
    const QPointF a = view->vertexPosition(result->topology.gpu_vertex(0));
    const QPointF b = view->vertexPosition(result->topology.gpu_vertex(1));
    const int edge = view->edgeAt((a + b) / 2);
    CHECK(edge >= 0);
    // All four forward links carry the same bytes, the most of any link: drawn in the hottest
    // colour (dark red) near the middle of GPU 0 -> GPU 1.
    bool hottest_found = false;
    const QPoint middle = ((a + b) / 2).toPoint();
    for (int dx = -4; dx <= 4; ++dx)
      for (int dy = -4; dy <= 4; ++dy) hottest_found |= image.pixel(middle + QPoint(dx, dy)) == qRgb(200, 30, 30);
    CHECK(hottest_found);
  }

  SECTION("timeline: compute ops drawn in their GPU's colour, clicking one shows its details") {
    window.showView("timeline");
    TimelineView* view = window.timelineView();
    const QImage image = view->grab().toImage();
    int checked = 0;
    for (const Segment& segment : window.timelineModel()->segments()) {
      if (segment.lane != Lane::compute || segment.op < 0) continue;
      const QPointF p = view->positionOf(segment.gpu, 0, (segment.start_s + segment.finish_s) / 2);
      if (view->positionOf(segment.gpu, 0, segment.finish_s).x() - view->positionOf(segment.gpu, 0, segment.start_s).x() < 4)
        continue;  // too narrow to sample safely
      CHECK(image.pixel(p.toPoint()) == rgb(gpu_color(segment.gpu)));
      CHECK(view->opAt(p) == segment.op);
      ++checked;
    }
    CHECK(checked >= 4);
    // A click on GPU 3's last compute op puts its description under the timeline.
    const Segment* last = nullptr;
    for (const Segment& segment : window.timelineModel()->segmentsOf(3))
      if (segment.lane == Lane::compute && segment.op >= 0) last = &segment;
    REQUIRE(last != nullptr);
    const QPoint at = view->positionOf(3, 0, (last->start_s + last->finish_s) / 2).toPoint();
    QMouseEvent press(QEvent::MouseButtonPress, at, view->mapToGlobal(at), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &press);
    QMouseEvent release(QEvent::MouseButtonRelease, at, view->mapToGlobal(at), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(view, &release);
    const auto* details = window.findChild<QLabel*>("op_details");
    REQUIRE(details != nullptr);
    CHECK(details->text().startsWith(QString::fromStdString(
        result->schedule.describe(result->schedule.ops[static_cast<size_t>(last->op)]))));
    CHECK(details->text().contains("blocks: "));
    CHECK(window.matrixModel()->selectedGpu() == 3);
    // Zoom in: the visible range shrinks around the pointer.
    const double span = view->visibleEnd_s() - view->visibleBegin_s();
    view->setVisibleRange(0, span / 4);
    CHECK(view->visibleEnd_s() == Approx(span / 4));
  }

  SECTION("compare: one bar per costed schedule; a sweep CSV gives one line per series") {
    window.showView("compare");
    CompareView* compare = window.compareView();
    int bars = 0;
    for (const CompareRow& row : result->compare) bars += row.time_s > 0 ? 1 : 0;
    CHECK(bars >= 3);
    CHECK(chart_point_count(compare->barChart(0)) == bars);
    QTemporaryDir dir;
    const QString csv = dir.filePath("sweep.csv");
    QFile file(csv);
    REQUIRE(file.open(QIODevice::WriteOnly));
    file.write("gpus,algo,time_s\n8,ring,2\n16,ring,3\n8,mesh,1\n16,mesh,1.5\n32,mesh,2\n");
    file.close();
    compare->loadSweep(csv);
    REQUIRE(compare->lineChart() != nullptr);
    CHECK(chart_series_count(compare->lineChart()) == 2);
    CHECK(chart_point_count(compare->lineChart()) == 5);
  }

  SECTION("exports: PNG, SVG and the Chrome trace") {
    QTemporaryDir dir;
    window.showView("network");
    REQUIRE(window.exportCurrentView(dir.filePath("network.png")));
    REQUIRE(window.exportCurrentView(dir.filePath("network.svg")));
    REQUIRE(window.exportTrace(dir.filePath("trace.json")));
    QImage png(dir.filePath("network.png"));
    CHECK(png.size() == window.networkView()->size());
    QFile svg(dir.filePath("network.svg"));
    REQUIRE(svg.open(QIODevice::ReadOnly));
    CHECK(svg.readAll().contains("<svg"));
    QFile trace(dir.filePath("trace.json"));
    REQUIRE(trace.open(QIODevice::ReadOnly));
    CHECK(trace.readAll().contains("traceEvents"));
  }
}

TEST_CASE("gui::MainWindow: impossible parameters show a message and keep the window usable", "[gui][window]") {
  MainWindow window;
  window.show();
  type_small_ring(window.parameterPanel());
  REQUIRE(run_and_wait(window));

  SECTION("ulysses with 4 heads on 8 GPUs") {
    window.parameterPanel()->setField("gpus", "8");
    window.parameterPanel()->setField("seq", "32K");
    window.parameterPanel()->setField("topology", "");
    window.parameterPanel()->setField("algorithm", "ulysses");
    CHECK_FALSE(run_and_wait(window));
    CHECK(window.messageText().contains("ulysses"));
  }
  SECTION("a mesh tile that does not divide the GPUs") {
    window.parameterPanel()->setField("algorithm", "mesh");
    window.parameterPanel()->setField("tile", "3x3");
    CHECK_FALSE(run_and_wait(window));
    CHECK_FALSE(window.messageText().isEmpty());
  }
  SECTION("a topology with fewer GPUs than the schedule") {
    window.parameterPanel()->setField("gpus", "8");
    CHECK_FALSE(run_and_wait(window));
    CHECK(window.messageText().contains("GPUs"));
  }
  // The previous result stays on screen, and a good run clears the message.
  CHECK(window.result()->schedule.gpus == 4);
  type_small_ring(window.parameterPanel());
  REQUIRE(run_and_wait(window));
  CHECK(window.messageText().isEmpty());
}

TEST_CASE("gui::MainWindow: a bad session file shows a message naming the field", "[gui][window]") {
  MainWindow window;
  window.show();
  QTemporaryDir dir;
  const QString path = dir.filePath("bad.json");
  QFile file(path);
  REQUIRE(file.open(QIODevice::WriteOnly));
  file.write(R"({"format": "tessera-gui-session", "version": 1, "problem": {"heads": {"n": 32}}})");
  file.close();
  const QString gpus_before = window.parameterPanel()->field("gpus");
  CHECK_FALSE(window.loadSession(path));
  CHECK(window.messageText().contains("problem.heads: expected a string"));
  CHECK(window.parameterPanel()->field("gpus") == gpus_before);
  CHECK_FALSE(window.loadSession(dir.filePath("missing.json")));
  CHECK(window.messageText().contains("cannot be read"));
}

TEST_CASE("gui::MainWindow: a session saved and opened again gives the same parameters", "[gui][window]") {
  QTemporaryDir dir;
  const QString path = dir.filePath("s.json");
  MainWindow first;
  type_small_ring(first.parameterPanel());
  REQUIRE(first.saveSession(path));
  MainWindow second;
  REQUIRE(second.loadSession(path));
  for (const char* name : {"gpus", "seq", "heads", "mask", "layout", "algorithm", "topology", "placement"})
    CHECK(second.parameterPanel()->field(name) == first.parameterPanel()->field(name));
  QSignalSpy shown(&second, &MainWindow::resultShown);
  REQUIRE(shown.wait(kRunTimeoutMs));
  CHECK(second.result()->schedule.gpus == 4);
}

TEST_CASE("gui::SimulationRunner: a cancelled run never shows its result", "[gui][window]") {
  SimulationRunner runner;
  QSignalSpy finished(&runner, &SimulationRunner::finished);
  QSignalSpy cancelled(&runner, &SimulationRunner::cancelled);
  runner.start(test::small_session(4, "ring", ""));
  runner.cancel();  // on the GUI thread, before any queued result can be delivered
  CHECK(cancelled.count() == 1);
  CHECK_FALSE(runner.isRunning());
  // A new run is delivered; the cancelled one (whatever its worker still does) is not.
  Session second = test::small_session(8, "ring", "");
  runner.start(second);
  REQUIRE(finished.wait(kRunTimeoutMs));
  QCoreApplication::processEvents();
  REQUIRE(finished.count() == 1);
  CHECK(finished.at(0).at(0).value<std::shared_ptr<const ScenarioResult>>()->schedule.gpus == 8);
}
