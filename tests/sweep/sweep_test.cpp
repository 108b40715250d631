// The sweep library: spec parsing (every bad field named with its line), point counts against
// hand-computed products, rows against closed forms, result tables, the journal's repair.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/sweep/evaluate.hpp"
#include "tessera/sweep/points.hpp"
#include "tessera/sweep/results.hpp"
#include "tessera/sweep/spec.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::sweep;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_spec(yaml, "spec.yaml");
  } catch (const UserError& error) {
    return error.what();
  }
  return "(no error)";
}

const std::string& cell(const Row& row, const std::string& column) { return row[column_index(column)]; }
double number(const Row& row, const std::string& column) { return std::stod(cell(row, column)); }

std::string scratch(const std::string& name) {
  const auto dir = std::filesystem::path(SWEEP_SCRATCH) / ("lib-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("spec errors name the file, the line, the field and what was expected", "[sweep][spec]") {
  struct Case {
    std::string yaml;
    std::string expected;  // the start of the message
  };
  const std::vector<Case> cases = {
      {"fixed:\n  algo: ring\ncolour: red\n", "spec.yaml:3: unknown key 'colour' at the top level"},
      {"fixed:\n  algo: ring\n  colour: red\n", "spec.yaml:3: fixed: unknown field 'colour'"},
      {"fixed:\n  algo: ring\n  seq: banana\n", "spec.yaml:3: fixed.seq: expected a number"},
      {"fixed:\n  algo: ring\naxes:\n  gpus: [4]\n", "spec.yaml:4: axes: expected a list"},
      {"fixed:\n  algo: ring\naxes:\n  - gpus: [4,\n      0]\n", "spec.yaml:5: axes[0].gpus[1]: expected 1 to 1048576 GPUs"},
      {"fixed:\n  algo: ring\naxes:\n  - {gpus: [4, 8], seq: [1M]}\n",
       "spec.yaml:4: axes[0].seq: has 1 values but gpus has 2"},
      {"fixed:\n  algo: ring\n  gpus: 8\naxes:\n  - gpus: [4]\n",
       "spec.yaml:5: axes[0]: field 'gpus' is already given on line 3"},
      {"axes:\n  - algo: [ring, rong]\n", "spec.yaml:2: axes[0].algo[1]: unknown schedule 'rong'"},
      {"fixed:\n  algo: mesh\n  tile: 4y4\n", "spec.yaml:3: fixed.tile:"},
      {"fixed:\n  algo: ring\n  fidelity: exact\n", "spec.yaml:3: fixed.fidelity: unknown fidelity 'exact'"},
      {"fixed:\n  algo: ring\n  dtype: fp8\n", "spec.yaml:3: fixed.dtype:"},
      {"fixed:\n  algo: ring\n  efficiency: 1.5\n", "spec.yaml:3: fixed.efficiency: 1.5 is not in (0, 1]"},
      {"fixed:\n  algo: ring\n  topology: moebius-strip\n", "spec.yaml:3: fixed.topology: 'moebius-strip' is neither"},
      {"fixed:\n  algo: ring\nskip:\n  - {algo: ring, colour: red}\n", "spec.yaml:4: skip[0]: unknown field 'colour'"},
      {"fixed:\n  algo: ring\nnot_applicable: ignore\n", "spec.yaml:3: not_applicable: unknown value 'ignore'"},
      {"fixed:\n  algo: ring\noutputs: [csv, parquet]\n", "spec.yaml:3: outputs[1]: unknown output 'parquet'"},
      {"fixed:\n  algo: ring\nfigures:\n  - {name: a, x: gpus}\n", "spec.yaml:4: figures[0]: missing field 'y'"},
      {"fixed:\n  algo: ring\nfigures:\n  - {name: a, x: gpus, y: time_s, colour: red}\n",
       "spec.yaml:4: unknown key 'colour' in figures[0]"},
      {"fixed:\n  seq: 1M\n", "spec.yaml:1: no schedule"},
      {"fixed:\n  algo: ring\n  mask: [causal\n", "spec.yaml:"},
  };
  for (const Case& test : cases) {
    INFO(test.yaml);
    const std::string message = error_of(test.yaml);
    CHECK(message.substr(0, test.expected.size()) == test.expected);
  }
}

TEST_CASE("a well-formed spec reads every section", "[sweep][spec]") {
  const Spec spec = parse_spec(
      "# comment\nname: demo\nfixed:\n  seq: 64K   # tokens\n  mask: full\naxes:\n  - gpus: [4, 8]\n"
      "  - {algo: [ring, mesh], tile: ['', 2x2]}\nskip:\n  - {gpus: 8, algo: mesh}\nnot_applicable: drop\n"
      "outputs: [csv]\nfigures:\n  - {name: t, kind: line, x: gpus, y: time_s, series: algo}\n",
      "demo.yaml");
  CHECK(spec.name == "demo");
  CHECK(spec.fixed[static_cast<size_t>(Field::seq)] == "64K");
  CHECK(spec.fixed[static_cast<size_t>(Field::heads)] == "32");  // the command line's default
  REQUIRE(spec.axes.size() == 2);
  CHECK(spec.axes[1].fields.size() == 2);  // zipped
  CHECK(spec.axes[1].size() == 2);
  CHECK(spec.drop_not_applicable);
  CHECK(spec.write_csv);
  CHECK_FALSE(spec.write_jsonl);
  REQUIRE(spec.figures.size() == 1);
  CHECK(spec.figures[0].line == 14);
  // 2 gpus x 2 zipped pairs = 4, minus (8, mesh) = 3.
  CHECK(product_size(spec) == 4);
  CHECK(enumerate_points(spec).size() == 3);
}

TEST_CASE("spec bandwidths carry their unit; their columns hold GB/s", "[sweep][spec][units]") {
  // 400 Gb/s = 400e9 / 8 B/s = 50 GB/s; 100 Gb/s = 12.5 GB/s; 1.6 Tb/s = 200 GB/s; 3.35 TB/s = 3350 GB/s.
  const Spec spec = parse_spec(
      "fixed:\n  algo: ring\n  hbm_bandwidth: 3.35TB/s\naxes:\n  - bandwidth: [100Gb/s, 400Gb/s, 1.6Tb/s, 50GB/s]\n"
      "skip:\n  - {bandwidth: 50GB/s}\n",
      "units.yaml");
  CHECK(spec.fixed[static_cast<size_t>(Field::hbm_gbps)] == "3350");
  REQUIRE(spec.axes.size() == 1);
  CHECK(spec.axes[0].fields == std::vector<Field>{Field::bandwidth_gbps});
  CHECK(spec.axes[0].values[0] == std::vector<std::string>{"12.5", "50", "200", "50"});
  // The skip rule, written in GB/s, drops the two points written as 400Gb/s and 50GB/s.
  CHECK(enumerate_points(spec).size() == 2);

  // The deprecated spelling: a number of GB/s, kept as written.
  const Spec old = parse_spec("fixed:\n  algo: ring\n  bandwidth_gbps: 50\n  hbm_gbps: 3350\n", "old.yaml");
  CHECK(old.fixed[static_cast<size_t>(Field::bandwidth_gbps)] == "50");
  CHECK(old.fixed[static_cast<size_t>(Field::hbm_gbps)] == "3350");

  CHECK(error_of("fixed:\n  algo: ring\n  bandwidth: 50\n").rfind(
            "spec.yaml:3: fixed.bandwidth: '50' has no unit: write 50GB/s (bytes per second) or 50Gb/s", 0) == 0);
  CHECK(error_of("fixed:\n  algo: ring\n  hbm_bandwidth: 3TiB/s\n").rfind("spec.yaml:3: fixed.hbm_bandwidth: ", 0) ==
        0);
  CHECK(error_of("fixed:\n  algo: ring\n  bandwidth_gbps: 400Gb/s\n")
            .rfind("spec.yaml:3: fixed.bandwidth_gbps: '400Gb/s' is not a number (of GB/s); a bandwidth with its "
                   "unit goes under bandwidth: 400Gb/s",
                   0) == 0);
  CHECK(error_of("fixed:\n  algo: ring\n  bandwidth_gbps: 50\naxes:\n  - bandwidth: [400Gb/s]\n")
            .rfind("spec.yaml:5: axes[0]: field 'bandwidth' is already given on line 3", 0) == 0);
}

TEST_CASE("a spec's defaults are the command line's, from the hardware presets", "[sweep][spec]") {
  // H100 SXM at 60 % of 989 TFLOP/s, 3.35 TB/s HBM; 400 Gb/s links (50 GB/s) of 5 us; NCCL's 8.4 us.
  const std::pair<Field, const char*> defaults[] = {
      {Field::gpu, "h100"},         {Field::peak_tflops, "989"}, {Field::efficiency, "0.6"},
      {Field::hbm_gbps, "3350"},    {Field::bandwidth_gbps, "50"}, {Field::latency_us, "5"},
      {Field::overhead_us, "8.4"},  {Field::gpus, "256"},        {Field::seq, "1M"},
      {Field::placement, "linear"}, {Field::fidelity, "analytic"}};
  for (const auto& [field, value] : defaults) {
    INFO(field_name(field));
    CHECK(field_default(field) == value);
  }
}

TEST_CASE("point counts: cartesian products, zipped axes, skip rules and expansions", "[sweep][points]") {
  // 4 GPU counts x 3 schedules x 2 zipped (seq, heads) pairs = 24.
  const std::string base =
      "fixed:\n  mask: full\naxes:\n  - gpus: [4, 8, 16, 32]\n  - algo: [ring, mesh, ulysses]\n"
      "  - {seq: [16K, 32K], heads: [8, 16]}\n";
  const Spec spec = parse_spec(base, "a.yaml");
  CHECK(product_size(spec) == 24);
  const PointSet points = enumerate_points(spec);
  REQUIRE(points.size() == 24);
  // Order: the first axis slowest, zipped values together.
  CHECK(points.value(0, Field::gpus) == "4");
  CHECK(points.value(0, Field::algo) == "ring");
  CHECK(points.value(0, Field::seq) == "16K");
  CHECK(points.value(0, Field::heads) == "8");
  CHECK(points.value(1, Field::seq) == "32K");
  CHECK(points.value(1, Field::heads) == "16");
  CHECK(points.value(2, Field::algo) == "mesh");
  CHECK(points.value(6, Field::gpus) == "8");
  CHECK(points.value(23, Field::gpus) == "32");
  CHECK(points.value(23, Field::algo) == "ulysses");
  // Skipping ulysses at 16 and 32 GPUs removes 2 x 2 points.
  CHECK(enumerate_points(parse_spec(base + "skip:\n  - {algo: ulysses, gpus: [16, 32]}\n", "b.yaml")).size() == 20);
  // Two rules: also every point with seq 32K (12 of 24, 10 of them still there) -> 10.
  CHECK(enumerate_points(parse_spec(base + "skip:\n  - {algo: ulysses, gpus: [16, 32]}\n  - {seq: 32K}\n", "c.yaml"))
            .size() == 10);
  // tile: all expands to the factor pairs of each GPU count for mesh: 4 -> 3, 8 -> 4, 16 -> 5;
  // ring takes no tile and stays one point per GPU count: 12 + 3 = 15.
  const PointSet tiles = enumerate_points(
      parse_spec("fixed:\n  tile: all\naxes:\n  - gpus: [4, 8, 16]\n  - algo: [ring, mesh]\n", "d.yaml"));
  CHECK(tiles.size() == 15);
  std::set<std::string> mesh16;
  for (size_t k = 0; k < tiles.size(); ++k)
    if (tiles.value(k, Field::gpus) == "16" && tiles.value(k, Field::algo) == "mesh") mesh16.insert(tiles.value(k, Field::tile));
  CHECK(mesh16 == std::set<std::string>{"1x16", "2x8", "4x4", "8x2", "16x1"});
  // algo: all is the plan's candidate list.
  const PointSet all = enumerate_points(parse_spec("fixed:\n  algo: all\n  gpus: 16\n  seq: 64K\n", "e.yaml"));
  Problem problem;
  problem.seq_len = 65536;
  CHECK(all.size() == plan_candidates(problem, 16, std::nullopt).size());
  CHECK(all.size() > 5);
  // An empty product.
  CHECK(enumerate_points(parse_spec("fixed:\n  algo: ring\n", "f.yaml")).size() == 1);
}

TEST_CASE("points that share a schedule are those that agree on every schedule field", "[sweep][points]") {
  // 4 GPU counts x 3 bandwidths x 2 fidelities: 24 points, 4 schedules (one per GPU count).
  const PointSet network = enumerate_points(parse_spec(
      "fixed:\n  algo: ring\naxes:\n  - gpus: [4, 8, 16, 32]\n  - bandwidth: [100Gb/s, 200Gb/s, 400Gb/s]\n"
      "  - fidelity: [analytic, flow]\n", "a.yaml"));
  REQUIRE(network.size() == 24);
  CHECK(network.distinct_count(schedule_fields()) == 4);
  // Problem axes alone (2 x 2 x 2): no two points share one.
  const PointSet problems = enumerate_points(
      parse_spec("axes:\n  - gpus: [4, 8]\n  - seq: [16K, 32K]\n  - algo: [ring, mesh]\n", "b.yaml"));
  CHECK(problems.distinct_count(schedule_fields()) == 8);
  // Batch sizes share one (the cache hands each its batch): 2 x 3 points, 2 schedules.
  const PointSet batches =
      enumerate_points(parse_spec("fixed:\n  algo: ring\naxes:\n  - gpus: [4, 8]\n  - batch: [1, 2, 4]\n", "c.yaml"));
  REQUIRE(batches.size() == 6);
  CHECK(batches.distinct_count(schedule_fields()) == 2);
  // No network field is a schedule field, nor the batch.
  for (Field field : schedule_fields())
    CHECK((field != Field::bandwidth_gbps && field != Field::topology && field != Field::fidelity &&
           field != Field::latency_us && field != Field::gpu && field != Field::batch));
}

TEST_CASE("a sweep's workers take the points of one schedule together, in runs of bounded length", "[sweep][points]") {
  // 2 GPU counts x 3 batch sizes: points 0-2 share the 4-GPU schedule, 3-5 the 8-GPU one.
  const PointSet batches =
      enumerate_points(parse_spec("fixed:\n  algo: ring\naxes:\n  - gpus: [4, 8]\n  - batch: [1, 2, 4]\n", "c.yaml"));
  REQUIRE(batches.size() == 6);
  CHECK(batches.agree(0, 2, schedule_fields()));
  CHECK_FALSE(batches.agree(2, 3, schedule_fields()));
  const std::vector<size_t> all{0, 1, 2, 3, 4, 5};
  CHECK(schedule_runs(batches, all, 100) == std::vector<size_t>{0, 3, 6});
  // Runs of at most 2: 0-1, 2 (the schedule ends), 3-4, 5.
  CHECK(schedule_runs(batches, all, 2) == std::vector<size_t>{0, 2, 3, 5, 6});
  CHECK(schedule_runs(batches, all, 1) == std::vector<size_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(schedule_runs(batches, all, 0) == std::vector<size_t>{0, 1, 2, 3, 4, 5, 6});  // at least 1
  // A resumed sweep's remaining points (positions into this list): 1 and 4 are of different schedules.
  const std::vector<size_t> remaining{1, 2, 4};
  CHECK(schedule_runs(batches, remaining, 100) == std::vector<size_t>{0, 2, 3});
  CHECK(schedule_runs(batches, std::vector<size_t>{}, 5) == std::vector<size_t>{0});
  // Problem axes alone: every point its own run.
  const PointSet problems = enumerate_points(
      parse_spec("fixed:\n  algo: ring\naxes:\n  - gpus: [4, 8]\n  - seq: [16K, 32K]\n", "b.yaml"));
  CHECK(schedule_runs(problems, std::vector<size_t>{0, 1, 2, 3}, 100) == std::vector<size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("rows match closed forms and refusals become statuses", "[sweep][evaluate]") {
  const Spec spec = parse_spec(
      "fixed:\n  seq: 64K\n  heads: 32\n  kv_heads: 32\n  mask: full\n  pass: forward\n"
      "axes:\n  - {gpus: [8, 16, 64, 8], algo: [ring, mesh, ulysses, mesh], tile: ['', 4x4, '', 3x3]}\n",
      "g.yaml");
  const PointSet points = enumerate_points(spec);
  REQUIRE(points.size() == 4);
  Evaluator evaluator;
  const Row ring = evaluator.evaluate(0, points.values(0));
  REQUIRE(cell(ring, "status") == "ok");
  // Ring: 2 (P - 1) / P * N * d * bytes with d = H x head_dim = 4096, bf16.
  const double ring_bytes = 2.0 * 7 / 8 * 65536 * 4096 * 2;
  CHECK(number(ring, "recv_bytes_max") == Approx(ring_bytes));
  CHECK(number(ring, "recv_kv_bytes_mean") == Approx(ring_bytes));
  CHECK(number(ring, "seq_tokens") == 65536);
  CHECK(number(ring, "time_s") == number(ring, "analytic_time_s"));
  CHECK(cell(ring, "simulated_time_s").empty());
  // Mesh a x b: Q, KV and partial O come to 2 (a + b - 2) N d / n elements per GPU.
  const Row mesh = evaluator.evaluate(1, points.values(1));
  REQUIRE(cell(mesh, "status") == "ok");
  const double mesh_bytes = 2.0 * (4 + 4 - 2) * 65536 * 4096 / 16 * 2;
  CHECK(number(mesh, "recv_q_bytes_mean") + number(mesh, "recv_kv_bytes_mean") + number(mesh, "recv_o_bytes_mean") ==
        Approx(mesh_bytes));
  // Ulysses on 64 GPUs with 32 heads, a 3x3 tile on 8 GPUs: not applicable, never a crash.
  const Row ulysses = evaluator.evaluate(2, points.values(2));
  CHECK(cell(ulysses, "status").rfind("skipped: ", 0) == 0);
  CHECK(cell(ulysses, "time_s").empty());
  const Row tile = evaluator.evaluate(3, points.values(3));
  CHECK(cell(tile, "status") == "skipped: tile 3x3 does not divide 8 GPUs");
}

TEST_CASE("simulated points carry the simulator's makespan in time_s", "[sweep][evaluate]") {
  const Spec spec = parse_spec(
      "fixed:\n  seq: 32K\n  gpus: 8\n  algo: ring\n  mask: full\n  pass: forward\naxes:\n"
      "  - fidelity: [alpha-beta, flow]\n  - topology: ['', switch-8]\n",
      "h.yaml");
  const PointSet points = enumerate_points(spec);
  REQUIRE(points.size() == 4);
  Evaluator evaluator;
  for (size_t k = 0; k < points.size(); ++k) {
    const Row row = evaluator.evaluate(k, points.values(k));
    INFO(cell(row, "status"));
    REQUIRE(cell(row, "status") == "ok");
    CHECK(number(row, "time_s") == number(row, "simulated_time_s"));
    CHECK(number(row, "simulated_time_s") >= number(row, "sim_lower_bound_s") * (1 - 1e-9));
    CHECK(number(row, "sim_transfers") > 0);
  }
  // On a topology the busiest link is reported.
  CHECK_FALSE(cell(evaluator.evaluate(1, points.values(1)), "busiest_link_bytes").empty());
}

TEST_CASE("CSV and JSON lines: quoting, numbers, round trip", "[sweep][results]") {
  Row row(result_columns().size());
  row[0] = "3";
  row[column_index("algo")] = "ring";
  row[column_index("status")] = "skipped: a, \"b\"";
  row[column_index("time_s")] = "0.25";
  const std::string csv = csv_header() + csv_row(row);
  const Table table = parse_csv(csv, "t.csv");
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0][table.column("status")] == "skipped: a, \"b\"");
  CHECK(table.rows[0][table.column("time_s")] == "0.25");
  const std::string json = jsonl_row(row);
  CHECK(json.find("\"index\":3") != std::string::npos);
  CHECK(json.find("\"time_s\":0.25") != std::string::npos);
  CHECK(json.find("\"simulated_time_s\"") == std::string::npos);  // empty cells left out
  // Quoted when a cell holds a comma, a quote (doubled) or a newline; an empty cell is nothing.
  CHECK(csv_row({"plain", "a,b", "say \"hi\"", "a\nb", "", "x"}) ==
        "plain,\"a,b\",\"say \"\"hi\"\"\",\"a\nb\",,x\n");
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(939524096) == "939524096");
  CHECK_THROWS_AS(table.column("nope"), UserError);
}

TEST_CASE("the journal cuts a torn last line and refuses other inputs", "[sweep][results]") {
  const std::string dir = scratch("journal");
  const Journal journal(dir + "/journal.jsonl", "0123456789abcdef");
  Row row(result_columns().size(), "");
  row[column_index("status")] = "ok";
  journal.append(journal_line(0, "0123456789abcdef", row) + journal_line(2, "0123456789abcdef", row));
  {
    std::ofstream torn(dir + "/journal.jsonl", std::ios::app);
    torn << "{\"index\":1,\"inputs_h";
  }
  const auto entries = journal.read_and_repair(3);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].index == 0);
  CHECK(entries[1].index == 2);
  // The torn line is gone from the file.
  std::ifstream in(dir + "/journal.jsonl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.back() == '\n');
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(text.find("{\"index\":1") == std::string::npos);
  const Journal other(dir + "/journal.jsonl", "fedcba9876543210");
  CHECK_THROWS_WITH(other.read_and_repair(3), Catch::Contains("written for other inputs"));
  CHECK_THROWS_WITH(journal.read_and_repair(2), Catch::Contains("does not belong to this sweep"));
}

TEST_CASE("the inputs hash follows the spec text and the tool version", "[sweep][results]") {
  const Spec a = parse_spec("fixed:\n  algo: ring\n", "a.yaml");
  const Spec b = parse_spec("fixed:\n  algo: ring   # same points, other text\n", "a.yaml");
  CHECK(inputs_hash(a, "1") == inputs_hash(a, "1"));
  CHECK(inputs_hash(a, "1").size() == 16);
  CHECK(inputs_hash(a, "1") != inputs_hash(b, "1"));
  CHECK(inputs_hash(a, "1") != inputs_hash(a, "2"));
}
