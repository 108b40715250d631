// Sweep results CSV, read generically: any x, y and series columns.
#include <catch2/catch.hpp>

#include "models/sweep_table.hpp"
#include "tessera/core/error.hpp"

using namespace tessera;
using namespace tessera::gui;

TEST_CASE("gui::SweepTable: series by a column, sorted by x", "[gui]") {
  const SweepTable table = SweepTable::parse(
      "gpus,seq,algo,time_s\n"
      "16,65536,mesh,0.004\n"
      "8,65536,mesh,0.006\n"
      "8,65536,ring,0.007\n"
      "16,65536,\"ring, zigzag\",0.009\n"
      "16,65536,ring,0.010\n",
      "sweep.csv");
  CHECK(table.columns() == QStringList{"gpus", "seq", "algo", "time_s"});
  CHECK(table.rowCount() == 5);
  CHECK(table.numericColumns() == QStringList{"gpus", "seq", "time_s"});
  const auto series = table.series("gpus", "time_s", "algo");
  REQUIRE(series.size() == 3);
  CHECK(series[0].name == "mesh");
  REQUIRE(series[0].points.size() == 2);
  CHECK(series[0].points[0] == QPointF(8, 0.006));
  CHECK(series[0].points[1] == QPointF(16, 0.004));
  CHECK(series[1].name == "ring");
  CHECK(series[2].name == "ring, zigzag");
  const auto one = table.series("gpus", "time_s");
  REQUIRE(one.size() == 1);
  CHECK(one[0].points.size() == 5);
}

TEST_CASE("gui::SweepTable: counts with suffixes are numbers; empty cells are skipped", "[gui]") {
  // Sweep specs write sequence lengths as 128K / 1M; failed points leave time_s empty.
  const SweepTable table = SweepTable::parse(
      "seq,schedule,status,time_s\n"
      "128K,ring,ok,0.5\n"
      "1M,ring,ok,4\n"
      "256K,ring,not applicable,\n",
      "sweep.csv");
  CHECK(table.numericColumns() == QStringList{"seq", "time_s"});
  const auto series = table.series("seq", "time_s", "schedule");
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].points.size() == 2);
  CHECK(series[0].points[0] == QPointF(131072, 0.5));
  CHECK(series[0].points[1] == QPointF(1048576, 4));
}

TEST_CASE("gui::SweepTable: errors name the file and line or column", "[gui]") {
  CHECK_THROWS_WITH(SweepTable::parse("a,b\n1,2\n3\n", "s.csv"), Catch::Contains("s.csv:3: 1 fields, but the header has 2"));
  CHECK_THROWS_WITH(SweepTable::parse("\n\n", "s.csv"), Catch::Contains("s.csv: empty file"));
  const SweepTable table = SweepTable::parse("a,b\n1,2\n", "s.csv");
  CHECK_THROWS_WITH(table.series("a", "time_s"), Catch::Contains("no column 'time_s'"));
}
