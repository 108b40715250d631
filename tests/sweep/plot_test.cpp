// The figure model: units in labels, SI ticks, charts built from a table (filters, aggregation,
// winner maps) and the SVG text.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/plot/chart.hpp"
#include "tessera/plot/figure.hpp"

using namespace tessera;
using namespace tessera::plot;

namespace {
size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
const char* kTable =
    "index,gpus,algo,tile,seq_tokens,status,time_s\n"
    "0,8,ring,,65536,ok,4\n"
    "1,8,mesh,2x4,65536,ok,3\n"
    "2,8,mesh,4x2,65536,ok,2\n"
    "3,16,ring,,65536,ok,3\n"
    "4,16,mesh,4x4,65536,ok,1\n"
    "5,16,ulysses,,65536,\"skipped: no\",\n"
    "6,8,ring,,131072,ok,5\n"
    "7,8,mesh,4x2,131072,ok,6\n";
}  // namespace

TEST_CASE("labels carry units and ticks SI prefixes", "[plot]") {
  CHECK(label_for("time_s") == "time (s)");
  CHECK(label_for("gpus") == "GPUs");
  CHECK(label_for("busiest_link_bytes") == "busiest link (bytes)");
  CHECK(label_for("recv_kv_bytes_mean") == "recv kv bytes mean (bytes)");
  CHECK(label_for("bandwidth_gbps") == "bandwidth (GB/s)");
  CHECK(si_format(1.5e9) == "1.5 G");
  CHECK(si_format(0.25) == "250 m");
  CHECK(si_format(12) == "12");
  CHECK(si_format(0) == "0");
  CHECK_THROWS_AS(parse_kind("pie"), UserError);
}

TEST_CASE("a line chart keeps ok rows, filters and takes the minimum per point", "[plot]") {
  const sweep::Table table = sweep::parse_csv(kTable, "t.csv");
  PlotRequest request = request_from_options({{"x", "gpus"}, {"y", "time_s"}, {"series", "algo"},
                                              {"where", "seq_tokens=65536"}});
  const Figure figure = make_figure(table, request);
  REQUIRE(figure.series.size() == 2);  // ring, mesh (ulysses was skipped)
  CHECK(figure.series[0].name == "ring");
  CHECK(figure.series[0].y == std::vector<double>{4, 3});
  CHECK(figure.series[1].y == std::vector<double>{2, 1});  // the best mesh tile at 8 GPUs
  CHECK(figure.log2_x);                                     // automatic for gpus
  CHECK(figure.y_label == "time (s)");
  const std::string svg = render_svg(figure);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<polyline") == 2);
  CHECK(svg.find(">time (s)<") != std::string::npos);
  CHECK(svg.find(">GPUs<") != std::string::npos);
  CHECK(svg.find("seq_tokens = 65536; min over rows sharing a point") != std::string::npos);
  request.aggregate = "mean";
  CHECK(make_figure(table, request).series[1].y == std::vector<double>{2.5, 1});
}

TEST_CASE("heatmaps and winner maps", "[plot]") {
  const sweep::Table table = sweep::parse_csv(kTable, "t.csv");
  const Figure heat = make_figure(table, request_from_options({{"kind", "heatmap"}, {"x", "gpus"}, {"y", "tile"},
                                                               {"value", "time_s"}, {"where", "algo=mesh"}}));
  CHECK(heat.x_categories == std::vector<std::string>{"8", "16"});
  CHECK(heat.y_categories == std::vector<std::string>{"2x4", "4x2", "4x4"});
  CHECK(heat.cells[0][0] == 3);
  CHECK(heat.cells[1][0] == 2);  // 4x2 at 8 GPUs: min of 2 (64K) and 6 (128K)
  CHECK(std::isnan(heat.cells[2][0]));
  CHECK(heat.cells[2][1] == 1);
  const Figure winner = make_figure(table, request_from_options({{"kind", "winner"}, {"x", "gpus"},
                                                                 {"y", "seq_tokens"}, {"series", "algo"},
                                                                 {"value", "time_s"}}));
  CHECK(winner.y_categories == std::vector<std::string>{"64K", "128K"});
  REQUIRE(winner.legend == std::vector<std::string>{"ring", "mesh"});
  CHECK(winner.winners[0][0] == 1);  // mesh at 8 GPUs, 64K
  CHECK(winner.cells[0][0] == 2);    // ring 4 over mesh 2
  CHECK(winner.winners[1][0] == 0);  // ring at 8 GPUs, 128K (5 < 6)
  CHECK(winner.winners[1][1] == -1); // no row at 16 GPUs, 128K
  CHECK(render_svg(winner).find(">2.00x<") != std::string::npos);
  CHECK_THROWS_WITH(make_figure(table, request_from_options({{"x", "gpus"}, {"y", "nope"}})),
                    Catch::Contains("no column 'nope'"));
  CHECK_THROWS_WITH(request_from_options({{"kind", "winner"}, {"x", "gpus"}, {"y", "seq"}}),
                    Catch::Contains("value:"));
}
