#pragma once
// Where a sweep's rows go. While it runs: an append-only journal (DIR/journal.jsonl), one
// complete JSON line per finished point carrying its index and the inputs hash, each written
// with a single write(2) (journal_writer.hpp: synced to disk at a bounded interval, cut back to
// its last whole line when a write fails). At the end (and when stopped early): the tables
// DIR/results.csv and DIR/results.jsonl in point-index order, and DIR/sweep.json (tool,
// version, inputs hash, progress) beside DIR/spec.yaml, each written to a temporary file,
// synced and renamed into place.
//
// What a resumed run reads back is checked like any other input: a journal line that is not
// {"index": whole number, "inputs_hash": text, "row": [text, ...]} of this sweep, a point
// journaled twice, or a sweep.json of other inputs stops the run (exit 2) naming FILE:LINE and
// the field. Only damage a crash can cause is repaired: the torn last line of a killed write,
// and the NUL bytes a machine crash can leave where unsynced data was, are cut off and their
// points evaluated again.
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
// ROW as Journal::read_and_repair reads it back from its journal_line: the same cells, except
// that an invalid UTF-8 sequence comes back as U+FFFD (the JSON writer replaces it).
void as_journaled(Row& row);

class Journal {
 public:
  Journal(std::string path, std::string hash) : path_(std::move(path)), hash_(std::move(hash)) {}
  // The entries already written, after cutting off a torn tail (from the first line without
  // its newline or with a NUL byte). UserError "FILE:LINE: ..." when a line comes from other
  // inputs, is not a journal line, names a point outside [0, point_count) or one already read.
  std::vector<Entry> read_and_repair(size_t point_count) const;
  // Complete lines, one write; on failure the file is cut back to where it was (UserError).
  void append(const std::string& lines) const;
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

// Writes PATH.tmp, syncs it, renames it to PATH and syncs the directory: PATH is the old or
// the new content, even after a machine crash. On failure (a full disk) PATH.tmp is removed and
// the UserError names it.
void write_file_atomically(const std::string& path, const std::string& content);

// Parses a results CSV back (for `tessera plot` and a sweep's figures): the header and the rows
// as text cells. Checked: every row has the header's number of fields, quotes are closed, and a
// column that tessera sweep writes as a number (result_columns()) holds a number or nothing;
// otherwise UserError "FILE:LINE: ...".
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> lines;  // the line each row starts on, for messages
  size_t column(const std::string& name) const;  // UserError naming the file's columns
  std::string source;
};
Table read_csv(const std::string& path);
Table parse_csv(const std::string& text, const std::string& source);

}  // namespace tessera::sweep
