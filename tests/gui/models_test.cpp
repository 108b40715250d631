// The GUI's data models, without a window: QAbstractItemModelTester checks each item model's
// contract, and the numbers are checked against the schedules' definitions and closed forms.
#include <QAbstractItemModelTester>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <set>

#include "gui_test_support.hpp"
#include "models/assignment_matrix_model.hpp"
#include "models/gpu_colors.hpp"
#include "models/link_table_model.hpp"
#include "models/network_layout.hpp"
#include "models/scenario_run.hpp"
#include "models/timeline_model.hpp"
#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/topologies/description.hpp"

using namespace tessera;
using namespace tessera::gui;

namespace {

std::shared_ptr<const ScenarioResult> run(const Session& session) {
  RunControl control;
  control.compare = false;
  return run_scenario(session, control);
}

}  // namespace

TEST_CASE("gui::AssignmentMatrixModel: ring, P = 4, contiguous, full mask: block (i, j) is GPU i's", "[gui]") {
  AssignmentMatrixModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto result = run(test::small_session(4, "ring", "ring-4"));
  model.setResult(result);
  REQUIRE(model.rowCount() == 4);
  REQUIRE(model.columnCount() == 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      CHECK(model.owner(i, j) == i);
      CHECK(model.data(model.index(i, j), AssignmentMatrixModel::OwnerGpuRole).toInt() == i);
      // Full mask: every block holds (N/P)^2 = 4096^2 pairs.
      CHECK(model.data(model.index(i, j), AssignmentMatrixModel::WorkPairsRole).toLongLong() == 4096LL * 4096LL);
    }
  CHECK(model.data(model.index(2, 1), Qt::ToolTipRole).toString().contains("GPU 2"));
}

TEST_CASE("gui::AssignmentMatrixModel: mesh 2x2 and 2x4 tiles follow the rotated assignment", "[gui]") {
  // GPU g = R*a + C holds query chunks {R*a + c} and KV chunks {C + r*a}: the owner of block
  // (i, j) is (i / a) * a + j mod a.
  for (auto [gpus, tile, a] : {std::tuple{4, "2x2", 2}, std::tuple{8, "2x4", 2}, std::tuple{8, "4x2", 4}}) {
    Session session = test::small_session(gpus, "mesh", "");
    session.schedule.tile = tile;
    AssignmentMatrixModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setResult(run(session));
    INFO("mesh " << tile << " on " << gpus << " GPUs");
    for (int i = 0; i < gpus; ++i)
      for (int j = 0; j < gpus; ++j) CHECK(model.owner(i, j) == (i / a) * a + j % a);
    // Each tile holds its GPU's own block.
    for (int g = 0; g < gpus; ++g) CHECK(model.owner(g, g) == g);
  }
}

TEST_CASE("gui::AssignmentMatrixModel: causal mask greys the blocks above the diagonal", "[gui]") {
  // Contiguous causal: block (i, j) with j > i has no unmasked pair, never scheduled.
  Session session = test::small_session(4, "ring", "");
  session.problem.mask = "causal";
  AssignmentMatrixModel model;
  model.setResult(run(session));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (j > i) {
        CHECK(model.owner(i, j) == -1);
        CHECK(model.cellColor(i, j) == masked_color());
      } else {
        CHECK(model.owner(i, j) == i);
      }
    }
  // The diagonal block of a causal contiguous chunk of n tokens has n(n+1)/2 pairs.
  CHECK(model.data(model.index(1, 1), AssignmentMatrixModel::WorkPairsRole).toLongLong() == 4096LL * 4097 / 2);
}

TEST_CASE("gui::AssignmentMatrixModel: the selected GPU's tile and received chunks", "[gui]") {
  SECTION("ring: GPU p receives every KV chunk but its own, and no Q") {
    AssignmentMatrixModel model;
    model.setResult(run(test::small_session(4, "ring", "")));
    model.setSelectedGpu(1);
    for (int k = 0; k < 4; ++k) {
      CHECK(model.receivedColumns()[static_cast<size_t>(k)] == (k != 1));
      CHECK_FALSE(model.receivedRows()[static_cast<size_t>(k)]);
      CHECK(model.data(model.index(1, k), AssignmentMatrixModel::SelectedTileRole).toBool());
      CHECK_FALSE(model.data(model.index(0, k), AssignmentMatrixModel::SelectedTileRole).toBool());
    }
  }
  SECTION("mesh 2x2: GPU 3 (R = 1, C = 1) receives Q chunk 2 and KV chunk 1") {
    Session session = test::small_session(4, "mesh", "");
    session.schedule.tile = "2x2";
    AssignmentMatrixModel model;
    model.setResult(run(session));
    model.setSelectedGpu(3);
    CHECK(model.receivedRows() == std::vector<bool>{false, false, true, false});
    CHECK(model.receivedColumns() == std::vector<bool>{false, true, false, false});
  }
  SECTION("an out-of-range GPU selects nothing") {
    AssignmentMatrixModel model;
    model.setResult(run(test::small_session(4, "ring", "")));
    model.setSelectedGpu(7);
    CHECK(model.selectedGpu() == -1);
  }
}

TEST_CASE("gui::AssignmentMatrixModel: the step time marks blocks done and chunks in flight", "[gui]") {
  auto result = run(test::small_session(4, "ring", "ring-4"));
  AssignmentMatrixModel model;
  model.setResult(result);
  auto done_count = [&] {
    int done = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) done += model.isDone(i, j) ? 1 : 0;
    return done;
  };
  model.setTime(0);
  CHECK(done_count() == 0);
  CHECK(model.cellColor(0, 0) == pending_color(gpu_color(0)));
  model.setTime(result->sim.makespan_s);
  CHECK(done_count() == 16);
  CHECK(model.cellColor(2, 3) == gpu_color(2));
  CHECK(model.inFlight().empty());
  // Ring: during the first step (after the own block), each GPU receives one KV chunk, from
  // its predecessor: all four transfers are in flight together at the same moment.
  double first_recv_start = result->sim.makespan_s;
  for (size_t op = 0; op < result->schedule.ops.size(); ++op)
    if (result->schedule.ops[op].kind == OpKind::recv)
      first_recv_start = std::min(first_recv_start, result->sim.op_start_s[op]);
  model.setTime(first_recv_start);
  const auto moving = model.inFlight();
  REQUIRE(moving.size() == 4);
  for (const auto& flight : moving) {
    CHECK(flight.item.kind == DataKind::KV);
    CHECK(flight.src == (flight.dst + 3) % 4);
    CHECK(flight.item.chunk == flight.src);
  }
}

TEST_CASE("gui::LinkTableModel: ring forward on a ring: (P-1) KV chunks per forward link", "[gui]") {
  // Ring pass-KV, forward: each GPU sends P-1 KV chunks to its successor, one hop on a
  // bidirectional ring; a KV chunk is K and V of N/P tokens: 2 (N/P) G d x 2 bytes (bf16).
  // Per GPU that is the closed form 2 (P-1)/P N G d bytes; the backward links carry nothing.
  constexpr int P = 4;
  constexpr double N = 4096.0 * P, G = 4, d = 64, bf16 = 2;
  const double kv_chunk_bytes = 2 * (N / P) * G * d * bf16;
  LinkTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto result = run(test::small_session(P, "ring", "ring-4"));
  model.setResult(result);
  REQUIRE(model.rowCount() == 2 * P);
  double total = 0;
  for (int edge = 0; edge < model.rowCount(); ++edge) {
    const topo::Topology& topology = result->topology;
    const int from = topology.vertex(topology.link_source(edge)).gpu;
    const int to = topology.vertex(topology.link_target(edge)).gpu;
    const bool forward = to == (from + 1) % P;
    CHECK(model.bytes(edge) == Approx(forward ? (P - 1) * kv_chunk_bytes : 0.0));
    CHECK(model.data(model.index(edge, LinkTableModel::BytesColumn), LinkTableModel::BytesRole).toDouble() ==
          model.bytes(edge));
    total += model.bytes(edge);
  }
  CHECK(total / P == Approx(2.0 * (P - 1) / P * N * G * d * bf16));
  CHECK(model.maxBytes() == Approx((P - 1) * kv_chunk_bytes));
  // Utilisation is a fraction of the makespan, positive on the busy links only.
  for (int edge = 0; edge < model.rowCount(); ++edge) {
    CHECK(model.utilization(edge) >= 0);
    CHECK(model.utilization(edge) <= 1.0 + 1e-9);
    CHECK((model.utilization(edge) > 0) == (model.bytes(edge) > 0));
  }
}

TEST_CASE("gui::TimelineModel: one segment per op and waits that add up to the exposed wait", "[gui]") {
  TimelineModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  Session session = test::small_session(8, "mesh", "h100-ib:1");
  session.schedule.tile = "2x4";
  auto result = run(session);
  model.setResult(result);
  size_t ops = 0;
  for (const Op& op : result->schedule.ops) ops += op.kind == OpKind::collective ? 2 : 1;
  size_t op_segments = 0;
  for (const Segment& segment : model.segments()) op_segments += segment.op >= 0 ? 1 : 0;
  CHECK(op_segments == ops);
  CHECK(model.rowCount() == static_cast<int>(model.segments().size()));
  for (int gpu = 0; gpu < 8; ++gpu) {
    double wait_s = 0, compute_s = 0;
    for (const Segment& segment : model.segmentsOf(gpu)) {
      CHECK(segment.gpu == gpu);
      if (segment.lane == Lane::wait) wait_s += segment.finish_s - segment.start_s;
      if (segment.lane == Lane::compute) compute_s += segment.finish_s - segment.start_s;
    }
    const sim::GpuTimes& times = result->sim.gpus[static_cast<size_t>(gpu)];
    // One compute stream: compute ops never overlap, so gaps = finish - busy time.
    CHECK(compute_s == Approx(times.compute_s).epsilon(1e-9));
    CHECK(wait_s == Approx(times.exposed_wait_s).epsilon(1e-9).margin(1e-15));
  }
  CHECK(model.opDetails(0).contains("GPU"));
}

TEST_CASE("gui::layout_network: each topology in its own shape", "[gui]") {
  SECTION("ring: GPUs on a circle, GPU 0 on top") {
    const topo::Topology ring = topo::load_topology("ring-8");
    const NetworkLayout layout = layout_network(ring);
    for (int gpu = 0; gpu < 8; ++gpu) {
      const QPointF p = layout.vertex_positions[static_cast<size_t>(ring.gpu_vertex(gpu))];
      CHECK(std::hypot(p.x() - 0.5, p.y() - 0.5) == Approx(0.42));
    }
    const QPointF top = layout.vertex_positions[static_cast<size_t>(ring.gpu_vertex(0))];
    CHECK(top.x() == Approx(0.5));
    CHECK(top.y() < 0.5);
  }
  SECTION("torus 4x2: a grid of 4 columns and 2 rows") {
    const topo::Topology torus = topo::load_topology("torus-4x2");
    const NetworkLayout layout = layout_network(torus);
    std::set<double> xs, ys;
    for (int32_t gpu = 0; gpu < torus.gpu_count(); ++gpu) {
      xs.insert(layout.vertex_positions[static_cast<size_t>(torus.gpu_vertex(gpu))].x());
      ys.insert(layout.vertex_positions[static_cast<size_t>(torus.gpu_vertex(gpu))].y());
    }
    CHECK(xs.size() == 4);
    CHECK(ys.size() == 2);
  }
  SECTION("cluster: spines over leaves over GPUs; servers side by side") {
    const topo::Topology cluster = topo::load_topology("h100-ib:2");
    const NetworkLayout layout = layout_network(cluster);
    double gpu_y = 0, spine_y = 1, leaf_y = 1;
    for (size_t vertex = 0; vertex < layout.vertex_positions.size(); ++vertex) {
      const double y = layout.vertex_positions[vertex].y();
      switch (cluster.vertex(static_cast<int32_t>(vertex)).kind) {
        case topo::VertexKind::gpu: gpu_y = std::max(gpu_y, y); break;
        case topo::VertexKind::spine: spine_y = std::min(spine_y, y); break;
        case topo::VertexKind::leaf: leaf_y = std::min(leaf_y, y); break;
        default: break;
      }
    }
    CHECK(spine_y < leaf_y);
    CHECK(leaf_y < gpu_y);
    // Every GPU of server 0 left of every GPU of server 1.
    for (int a = 0; a < 8; ++a)
      for (int b = 8; b < 16; ++b)
        CHECK(layout.vertex_positions[static_cast<size_t>(cluster.gpu_vertex(a))].x() <
              layout.vertex_positions[static_cast<size_t>(cluster.gpu_vertex(b))].x());
  }
}

TEST_CASE("gui::run_scenario: impossible parameters are user errors naming the cause", "[gui]") {
  SECTION("ulysses with heads not divisible by the GPUs") {
    Session session = test::small_session(8, "ulysses", "");  // 4 heads over 8 GPUs
    CHECK_THROWS_WITH(run(session), Catch::Contains("ulysses"));
  }
  SECTION("a tile that does not divide the GPUs") {
    Session session = test::small_session(8, "mesh", "");
    session.schedule.tile = "3x3";
    CHECK_THROWS_AS(run(session), UserError);
  }
  SECTION("a topology with too few GPUs") {
    CHECK_THROWS_WITH(run(test::small_session(8, "ring", "ring-4")), Catch::Contains("GPU"));
  }
  SECTION("an unknown fidelity") {
    Session session = test::small_session(4, "ring", "");
    session.fidelity = "exact";
    CHECK_THROWS_AS(run(session), UserError);
  }
  SECTION("more GPUs than the views are made for") {
    Session session = test::small_session(2048, "ring", "");
    CHECK_THROWS_WITH(run(session), Catch::Contains("at most 1024"));
  }
  SECTION("a sequence shorter than the GPU count") {
    Session session = test::small_session(8, "ring", "");
    session.problem.seq = "4";
    CHECK_THROWS_WITH(run(session), Catch::Contains("--seq"));
  }
}

TEST_CASE("gui::run_scenario: a cancelled run stops at the next phase; compare costs every candidate", "[gui]") {
  std::atomic<bool> cancel{true};
  RunControl control;
  control.cancel = &cancel;
  CHECK_THROWS_AS(run_scenario(test::small_session(4, "ring", ""), control), RunCancelled);

  std::vector<int> percents;
  RunControl counting;
  counting.progress = [&](int percent, const std::string&) { percents.push_back(percent); };
  auto result = run_scenario(test::small_session(4, "ring", ""), counting);
  REQUIRE(!percents.empty());
  CHECK(std::is_sorted(percents.begin(), percents.end()));
  CHECK(percents.back() == 100);
  // Every candidate of plan_candidates is either costed or listed as not applicable.
  const auto candidates = schedules::plan_candidates(result->schedule.problem, 4, result->schedule.layout);
  CHECK(result->compare.size() + result->compare_skipped.size() == candidates.size());
  CHECK(std::count_if(result->compare.begin(), result->compare.end(), [](const CompareRow& row) { return row.is_current; }) >= 1);
}
