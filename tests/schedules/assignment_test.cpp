// Custom assignment matrices: ring-like, column-like, mesh-like and random ones all give valid
// schedules; bad files are refused with the file and the entry named.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/generators.hpp"

#include "common/scratch.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;
using test_support::scratch_path;

namespace {
std::string write_matrix(const std::string& name, int32_t gpus, const std::vector<std::vector<int32_t>>& matrix) {
  const std::string path = scratch_path(name);
  std::ofstream(path) << nlohmann::json{{"gpus", gpus}, {"assignment", matrix}}.dump();
  return path;
}

Problem problem_for(int32_t gpus, MaskKind mask, Pass pass) {
  Problem problem;
  problem.seq_len = 4 * gpus + 3;
  problem.heads = 4;
  problem.kv_heads = 2;
  problem.head_dim = 32;
  problem.head_dim_v = 32;
  problem.mask.kind = mask;
  problem.pass = pass;
  return problem;
}

Schedule from_file(const Problem& problem, int32_t gpus, const std::string& path) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.layout = Layout::contiguous;
  options.input_path = path;
  return generate_schedule("assignment", problem, options);
}
}  // namespace

TEST_CASE("assignment matrices of every shape give valid schedules", "[assignment]") {
  std::mt19937 random(12345);
  for (int32_t gpus : {1, 2, 3, 5, 8}) {
    for (MaskKind mask : {MaskKind::full, MaskKind::causal}) {
      for (Pass pass : {Pass::forward, Pass::backward, Pass::both}) {
        const auto n = static_cast<size_t>(gpus);
        std::vector<std::vector<std::vector<int32_t>>> matrices;
        std::vector<std::vector<int32_t>> rows(n, std::vector<int32_t>(n)), columns = rows, spread = rows;
        for (int32_t i = 0; i < gpus; ++i)
          for (int32_t j = 0; j < gpus; ++j) {
            rows[static_cast<size_t>(i)][static_cast<size_t>(j)] = i;     // ring: a row per GPU
            columns[static_cast<size_t>(i)][static_cast<size_t>(j)] = j;  // pass-Q: a column per GPU
            spread[static_cast<size_t>(i)][static_cast<size_t>(j)] = static_cast<int32_t>(random() % n);
          }
        matrices = {rows, columns, spread};
        for (size_t m = 0; m < matrices.size(); ++m) {
          Problem problem = problem_for(gpus, mask, pass);
          std::string path = write_matrix("assignment_test.json", gpus, matrices[m]);
          Schedule schedule = from_file(problem, gpus, path);
          CheckResult check = check_schedule(schedule, BlockGrid(problem, Layout::contiguous, gpus));
          INFO("P=" << gpus << " matrix " << m << " " << to_string(mask) << " " << to_string(pass) << ": "
                    << check.violation);
          CHECK(check.ok());
        }
      }
    }
  }
}

TEST_CASE("a row-per-GPU assignment moves the KV of a ring without its hops", "[assignment]") {
  // Every GPU fetches the P - 1 other KV chunks directly: (P-1) (N/P) G (d + d_v) bytes each.
  const int32_t gpus = 4;
  Problem problem = problem_for(gpus, MaskKind::full, Pass::forward);
  problem.seq_len = 4096;
  std::vector<std::vector<int32_t>> rows(gpus, std::vector<int32_t>(gpus));
  for (int32_t i = 0; i < gpus; ++i)
    for (int32_t j = 0; j < gpus; ++j) rows[static_cast<size_t>(i)][static_cast<size_t>(j)] = i;
  Schedule schedule = from_file(problem, gpus, write_matrix("assignment_rows.json", gpus, rows));
  BlockGrid grid(problem, Layout::contiguous, gpus);
  CheckResult check = check_schedule(schedule, grid);
  REQUIRE(check.ok());
  CostReport report = cost_schedule(schedules::check(schedule), Hardware{});
  CHECK(report.recv_bytes_max == 3 * 1024 * 2 * (32 + 32) * 2);
}

TEST_CASE("bad assignment files are refused with the entry named", "[assignment]") {
  Problem problem = problem_for(2, MaskKind::full, Pass::forward);
  std::ofstream(scratch_path("assignment_bad.json")) << R"({"gpus": 2, "assignment": [[0, 1], [1, 7]]})";
  REQUIRE_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_bad.json")), Catch::Contains("assignment[1][1]: GPU 7 does not exist"));
  std::ofstream(scratch_path("assignment_shape.json")) << R"({"gpus": 2, "assignment": [[0, 1]]})";
  REQUIRE_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_shape.json")), Catch::Contains("expected 2 rows"));
  std::ofstream(scratch_path("assignment_count.json")) << R"({"gpus": 3, "assignment": []})";
  REQUIRE_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_count.json")), Catch::Contains("--gpus is 2"));
  std::ofstream(scratch_path("assignment_text.json")) << "not json";
  REQUIRE_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_text.json")), Catch::Contains("not valid JSON"));
  REQUIRE_THROWS_AS(from_file(problem, 2, "assignment_missing.json"), UserError);
}

TEST_CASE("fully masked blocks take -1 or a GPU; anything else is refused naming the entry", "[assignment]") {
  // Causal, 2 GPUs, contiguous: block (0, 1) (queries before keys) is fully masked.
  Problem problem = problem_for(2, MaskKind::causal, Pass::forward);
  std::ofstream(scratch_path("assignment_masked.json")) << R"({"gpus": 2, "assignment": [[0, -1], [1, 1]]})";
  CHECK(check_schedule(from_file(problem, 2, scratch_path("assignment_masked.json")),
                       BlockGrid(problem, Layout::contiguous, 2))
            .ok());
  std::ofstream(scratch_path("assignment_masked_9.json")) << R"({"gpus": 2, "assignment": [[0, 9], [1, 1]]})";
  CHECK_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_masked_9.json")),
                    scratch_path("assignment_masked_9.json") +
                        ": assignment[0][1]: GPU 9 does not exist (2 GPUs); write -1 for this fully masked block");
  // A block with work cannot be left to nobody.
  std::ofstream(scratch_path("assignment_unowned.json")) << R"({"gpus": 2, "assignment": [[-1, -1], [1, 1]]})";
  CHECK_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_unowned.json")),
                    scratch_path("assignment_unowned.json") +
                        ": assignment[0][0]: GPU -1 does not exist (2 GPUs); this block has work and needs one");
  // Rows checked for shape before anything is allocated.
  std::ofstream(scratch_path("assignment_short_rows.json")) << R"({"gpus": 2, "assignment": [[], []]})";
  CHECK_THROWS_WITH(from_file(problem, 2, scratch_path("assignment_short_rows.json")),
                    scratch_path("assignment_short_rows.json") +
                        ": assignment[0]: expected 2 entries (one per key/value chunk), got 0");
}
