#include "tessera/backend/nccl_tests_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::backend {

namespace {

constexpr NcclTest kTests[] = {NcclTest::all_reduce, NcclTest::all_gather, NcclTest::sendrecv, NcclTest::alltoall};
constexpr size_t kMaxFileBytes = 64u << 20;  // a table of every size from 8 B to 16 GB is a few kB
constexpr size_t kColumnsPerGroup = 4;       // time, algbw, busbw, #wrong

std::string stem(NcclTest test) {
  switch (test) {
    case NcclTest::all_reduce: return "all_reduce";
    case NcclTest::all_gather: return "all_gather";
    case NcclTest::sendrecv: return "sendrecv";
    case NcclTest::alltoall: return "alltoall";
  }
  return "";
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// "[1,0]<stdout>:" in front of a line: mpirun --tag-output.
std::string untagged(const std::string& line) {
  if (line.empty() || line[0] != '[') return line;
  const size_t tag = line.find(">:");
  if (tag == std::string::npos || line.find('<') > tag) return line;
  return line.substr(tag + 2);
}

std::optional<double> number(const std::string& word) {
  double value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The test a name mentions ("all_reduce_perf", "all_reduce_perf_mpi", a file "sendrecv-2nodes.txt").
std::optional<NcclTest> test_named_in(const std::string& text) {
  std::optional<NcclTest> found;
  size_t first = std::string::npos;
  for (NcclTest test : kTests) {
    const size_t at = text.find(stem(test));
    if (at != std::string::npos && at < first) {
      first = at;
      found = test;
    }
  }
  return found;
}

// The rank count from busbw / algbw of the largest row, where the Rank lines are missing.
int32_t ranks_from_bandwidths(NcclTest test, double algbw, double busbw) {
  if (!(algbw > 0) || !(busbw > 0)) return 0;
  const double ratio = busbw / algbw;
  // all-reduce: ratio = 2(n-1)/n, so n = 2 / (2 - ratio); the others: n = 1 / (1 - ratio).
  const double top = test == NcclTest::all_reduce ? 2.0 : 1.0;
  if (!(ratio < top)) return 0;
  const double ranks = top / (top - ratio);
  const double rounded = std::round(ranks);
  // Printed bandwidths have two decimals: the estimate lands near an integer or not at all.
  if (rounded < 2 || rounded > (1 << 20) || std::abs(ranks - rounded) > 0.25) return 0;
  return static_cast<int32_t>(rounded);
}

}  // namespace

std::string to_string(NcclTest test) { return stem(test) + "_perf"; }

double bus_factor(NcclTest test, int32_t ranks) {
  const double n = ranks;
  switch (test) {
    case NcclTest::all_reduce: return 2 * (n - 1) / n;
    case NcclTest::all_gather:
    case NcclTest::alltoall: return (n - 1) / n;
    case NcclTest::sendrecv: return 1;
  }
  return 1;
}

int32_t sequential_steps(NcclTest test, int32_t ranks) {
  switch (test) {
    case NcclTest::all_reduce: return 2 * (ranks - 1);
    case NcclTest::all_gather: return ranks - 1;
    case NcclTest::sendrecv:
    case NcclTest::alltoall: return 1;
  }
  return 1;
}

NcclTestsTable read_nccl_tests_table(const std::string& path) {
  std::error_code size_error;
  const auto file_bytes = std::filesystem::file_size(path, size_error);
  std::ifstream in(path);
  if (!in || size_error) throw UserError(path + ": cannot be read (expected an nccl-tests output table)");
  if (file_bytes > kMaxFileBytes)
    throw UserError(path + ": " + std::to_string(file_bytes) + " bytes, more than an nccl-tests table holds (64 MiB at most)");
  NcclTestsTable table;
  table.path = path;
  std::optional<NcclTest> test;
  int32_t max_rank = -1;
  size_t time_groups = 0;  // from the header: 1 (out-of-place only) or 2
  double largest_algbw = 0, largest_busbw = 0;
  auto fail_at = [&](int line, const std::string& what) -> void {
    throw UserError(path + ":" + std::to_string(line) + ": " + what);
  };
  std::string raw;
  for (int line_number = 1; std::getline(in, raw); ++line_number) {
    const std::string line = untagged(raw);
    const std::vector<std::string> tokens = words(line);
    if (tokens.empty()) continue;
    if (tokens[0][0] == '#') {
      // Comments: the test's name, its ranks and hosts, and the column header.
      if (const size_t at = line.find("Collective test starting:"); at != std::string::npos) {
        test = test_named_in(line.substr(at));
        if (!test)
          fail_at(line_number, "the test is not one of all_reduce_perf, all_gather_perf, sendrecv_perf, alltoall_perf");
      }
      const auto rank_word = std::find(tokens.begin(), tokens.end(), "Rank");
      const auto on_word = std::find(tokens.begin(), tokens.end(), "on");
      if (rank_word != tokens.end() && rank_word + 1 != tokens.end() && on_word != tokens.end() &&
          on_word + 1 != tokens.end() && on_word > rank_word) {
        const std::optional<double> rank = number(*(rank_word + 1));
        if (rank && *rank >= 0 && *rank < (1 << 20)) {
          max_rank = std::max(max_rank, static_cast<int32_t>(*rank));
          const std::string& host = *(on_word + 1);
          if (std::find(table.hosts.begin(), table.hosts.end(), host) == table.hosts.end()) table.hosts.push_back(host);
        }
      }
      if (std::find(tokens.begin(), tokens.end(), "size") != tokens.end() &&
          std::find(tokens.begin(), tokens.end(), "busbw") != tokens.end()) {
        time_groups = static_cast<size_t>(std::count(tokens.begin(), tokens.end(), "time"));
        if (time_groups < 1 || time_groups > 2)
          fail_at(line_number, "a header with " + std::to_string(time_groups) +
                                   " time columns (expected out-of-place and in-place: size count type redop root "
                                   "time algbw busbw #wrong time algbw busbw #wrong)");
      }
      continue;
    }
    if (time_groups == 0) continue;  // text before the table (a command line, a note)
    // A row: size first, then per group (time, algbw, busbw, #wrong) counted from the right.
    const size_t needed = 2 + time_groups * kColumnsPerGroup;  // size, count or type at least
    if (tokens.size() < needed)
      fail_at(line_number, "a row cut short: " + std::to_string(tokens.size()) + " columns, expected at least " +
                               std::to_string(needed) + " (size count type ... time algbw busbw #wrong" +
                               (time_groups == 2 ? " time algbw busbw #wrong)" : ")"));
    const std::optional<double> size = number(tokens[0]);
    if (!size || *size < 1 || *size > 1e15 || std::floor(*size) != *size)
      fail_at(line_number, "size: expected a number of bytes, got " + tessera::quoted(tokens[0]));
    NcclTestsRow row;
    row.size_bytes = static_cast<int64_t>(*size);
    row.line = line_number;
    for (size_t group = 0; group < time_groups; ++group) {
      const size_t at = tokens.size() - (time_groups - group) * kColumnsPerGroup;
      if (tokens[at] == "N/A") continue;  // an in-place run the test does not make
      const std::optional<double> time_us = number(tokens[at]);
      if (!time_us || !(*time_us > 0))
        fail_at(line_number, "time: expected microseconds above 0, got " + tessera::quoted(tokens[at]));
      for (size_t column = 1; column <= 2; ++column)
        if (!number(tokens[at + column]))
          fail_at(line_number, std::string(column == 1 ? "algbw" : "busbw") + ": expected GB/s, got " +
                                   tessera::quoted(tokens[at + column]));
      row.times_s.push_back(*time_us * 1e-6);
      if (group == 0 && row.size_bytes >= (table.rows.empty() ? 0 : table.rows.back().size_bytes)) {
        largest_algbw = *number(tokens[at + 1]);
        largest_busbw = *number(tokens[at + 2]);
      }
    }
    if (row.times_s.empty()) fail_at(line_number, "no time in the row (both N/A)");
    table.rows.push_back(std::move(row));
  }
  if (in.bad()) throw UserError(path + ": reading failed");
  if (time_groups == 0)
    throw UserError(path + ": no nccl-tests header (# size count type redop root time algbw busbw #wrong ...)");
  if (table.rows.empty()) throw UserError(path + ": the table has no rows (a run cut off before its first size?)");
  if (!test) test = test_named_in(std::filesystem::path(path).filename().string());
  if (!test)
    throw UserError(path + ": cannot tell which test wrote it (no '# Collective test starting:' line): name the "
                           "file after it, e.g. all_reduce_perf.txt");
  table.test = *test;
  table.ranks = max_rank + 1;
  if (table.ranks == 0 && table.test != NcclTest::sendrecv) {
    table.ranks = ranks_from_bandwidths(table.test, largest_algbw, largest_busbw);
    if (table.ranks == 0)
      throw UserError(path + ": no '# Rank ... on HOST' lines, and busbw / algbw of the largest row does not give a rank count");
  }
  if (table.test != NcclTest::sendrecv && table.ranks < 2)
    throw UserError(path + ": " + to_string(table.test) + " on " + std::to_string(table.ranks) +
                    " rank moves nothing (expected at least 2 ranks)");
  return table;
}

}  // namespace tessera::backend
