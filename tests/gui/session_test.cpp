// Session files: a round trip keeps every field; every error names the field at fault.
#include <QFile>
#include <QTemporaryDir>

#include <catch2/catch.hpp>

#include "models/session.hpp"
#include "tessera/core/error.hpp"

using namespace tessera;
using namespace tessera::gui;

TEST_CASE("gui::Session: written and read back unchanged", "[gui]") {
  Session session = default_session();
  session.problem.mask = "sliding-window";
  session.problem.window = "8K";
  session.schedule.tile = "8x8";
  session.network.placement = "round-robin";
  session.fidelity = "alpha-beta";
  session.view = "timeline";
  session.selected_gpu = 5;
  QTemporaryDir dir;
  const QString path = dir.filePath("session.json");
  write_session(path, session);
  const Session back = read_session(path);
  CHECK(session_to_json(back) == session_to_json(session));
  CHECK(back.problem.window == "8K");
  CHECK(back.schedule.tile == "8x8");
  CHECK(back.view == "timeline");
  CHECK(back.selected_gpu == 5);
}

TEST_CASE("gui::Session: the sweep file is kept relative to the session file", "[gui]") {
  QTemporaryDir dir;
  Session session = default_session();
  session.sweep = {dir.filePath("runs/results.csv").toStdString(), "gpus", "time_s", "algo", true, false};
  const QString path = dir.filePath("session.json");
  write_session(path, session);
  QFile file(path);
  REQUIRE(file.open(QIODevice::ReadOnly));
  CHECK(file.readAll().contains("\"file\": \"runs/results.csv\""));
  const Session back = read_session(path);
  CHECK(back.sweep.file == session.sweep.file);
  CHECK(back.sweep.series == "algo");
  CHECK(back.sweep.log_x);
  CHECK_FALSE(back.sweep.log_y);
  CHECK_THROWS_WITH(parse_session(R"({"format": "tessera-gui-session", "version": 1, "sweep": {"log_x": 1}})", "s.json"),
                    Catch::Contains("sweep.log_x: expected true or false"));
}

TEST_CASE("gui::Session: bad files name the field", "[gui]") {
  auto parse = [](const char* json) { return parse_session(QByteArray(json), "s.json"); };
  SECTION("not JSON: the line and column are named") {
    CHECK_THROWS_WITH(parse("{\n  \"format\": "), Catch::StartsWith("s.json:2:") && Catch::Contains("not valid JSON"));
    CHECK_THROWS_WITH(parse(""), Catch::StartsWith("s.json:1:1: not valid JSON"));
  }
  SECTION("a number past a double") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "selected_gpu": 1e999})"),
                      Catch::StartsWith("s.json:1:") && Catch::Contains("not valid JSON"));
  }
  SECTION("whole numbers past the integers are not taken for text") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "problem": {"gpus": 1e30}})"),
                      Catch::Contains("s.json: problem.gpus: expected a string (or a whole number)"));
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "selected_gpu": 4294967296})"),
                      Catch::Contains("s.json: selected_gpu: expected a GPU index"));
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1e300})"),
                      Catch::Contains("s.json: version: expected 1"));
  }
  SECTION("not an object") { CHECK_THROWS_WITH(parse("[1, 2]"), Catch::Contains("expected a JSON object")); }
  SECTION("wrong format") {
    CHECK_THROWS_WITH(parse(R"({"format": "x", "version": 1})"), Catch::Contains("s.json: format: expected"));
  }
  SECTION("wrong version") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 7})"),
                      Catch::Contains("s.json: version: expected 1"));
  }
  SECTION("a field of the wrong type") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "problem": {"seq": [1]}})"),
                      Catch::Contains("s.json: problem.seq: expected a string"));
  }
  SECTION("an unknown field") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "network": {"topo": "ring-8"}})"),
                      Catch::Contains("network.topo: unknown field"));
  }
  SECTION("a section that is not an object") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "schedule": "mesh"})"),
                      Catch::Contains("schedule: expected an object"));
  }
  SECTION("an unknown view") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "view": "3d"})"),
                      Catch::Contains("view: expected one of"));
  }
  SECTION("a selected GPU that is not an index") {
    CHECK_THROWS_WITH(parse(R"({"format": "tessera-gui-session", "version": 1, "selected_gpu": "9"})"),
                      Catch::Contains("selected_gpu: expected a GPU index"));
  }
  SECTION("a missing file") { CHECK_THROWS_AS(read_session("/nonexistent/session.json"), UserError); }
  SECTION("a directory, an empty file, a truncated file") {
    QTemporaryDir dir;
    CHECK_THROWS_WITH(read_session(dir.path()), Catch::Contains(dir.path().toStdString() + ": is a directory"));
    const QString empty = dir.filePath("empty.json");
    QFile(empty).open(QIODevice::WriteOnly);
    CHECK_THROWS_WITH(read_session(empty), Catch::StartsWith(empty.toStdString() + ":1:1: not valid JSON"));
    const QString truncated = dir.filePath("truncated.json");
    write_session(truncated, default_session());
    QFile file(truncated);
    REQUIRE(file.open(QIODevice::ReadWrite));
    REQUIRE(file.resize(file.size() / 2));
    file.close();
    CHECK_THROWS_WITH(read_session(truncated), Catch::StartsWith(truncated.toStdString() + ":") &&
                                                   Catch::Contains("not valid JSON"));
  }
}

TEST_CASE("gui::Session: whole numbers are accepted for text fields", "[gui]") {
  const Session session = parse_session(
      R"({"format": "tessera-gui-session", "version": 1, "problem": {"gpus": 16, "seq": "64K"}})", "s.json");
  CHECK(session.problem.gpus == "16");
  CHECK(session.problem.seq == "64K");
  CHECK_THROWS_WITH(parse_session(R"({"format": "tessera-gui-session", "version": 1, "problem": {"gpus": 1.5}})",
                                  "s.json"),
                    Catch::Contains("problem.gpus: expected a string"));
}
