#pragma once
// Where a sweep's rows go. While it runs: an append-only journal (DIR/journal.jsonl), one
// complete JSON line per finished point carrying its index and the inputs hash, each written
// with a single write(2) so that a killed run leaves at worst one torn last line, which the
// next run cuts off. At the end (and when stopped early): the tables DIR/results.csv and
// DIR/results.jsonl in point-index order, and DIR/sweep.json (tool, version, inputs hash,
// progress) beside DIR/spec.yaml, each written to a temporary file and renamed into place.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sweep/evaluate.hpp"
#include "tessera/sweep/spec.hpp"

namespace tessera::sweep {

struct Entry {
  size_t index = 0;
  Row row;
};

// FNV-1a 64 of the tool version, the spec text and every topology file the spec names, as 16
// hex digits. Not cryptographic: it tells a resumed run whether its inputs changed.
std::string inputs_hash(const Spec& spec, const std::string& tool_version);

std::string journal_line(size_t index, const std::string& hash, const Row& row);  // with its '\n'

class Journal {
 public:
  Journal(std::string path, std::string hash) : path_(std::move(path)), hash_(std::move(hash)) {}
  // The entries already written (first copy of each index), after cutting off a torn last
  // line. UserError when a line comes from other inputs or is unreadable.
  std::vector<Entry> read_and_repair(size_t point_count) const;
  void append(const std::string& lines) const;  // complete lines, one write
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string hash_;
};

// CSV with a header of result_columns(); fields quoted when they hold a comma or a quote.
std::string csv_header();
std::string csv_row(const Row& row);
// One JSON object per row: numbers as numbers, empty cells left out.
std::string jsonl_row(const Row& row);

void write_file_atomically(const std::string& path, const std::string& content);

// Parses a results CSV back (for `tessera plot`): the header and the rows as text cells.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  size_t column(const std::string& name) const;  // UserError naming the file's columns
  std::string source;
};
Table read_csv(const std::string& path);
Table parse_csv(const std::string& text, const std::string& source);

}  // namespace tessera::sweep
