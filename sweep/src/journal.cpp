// The journal read back on resume, checked line by line (results.hpp says what is repaired and
// what is refused).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "file_io.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/sweep/json_line.hpp"
#include "tessera/sweep/results.hpp"

namespace tessera::sweep {

using nlohmann::json;

namespace {

// Parsed entries hold each row's cells as strings: a few times the line's text.
constexpr double kEntryBytesPerJournalByte = 4;

// Where the undamaged part of the journal ends: at the first line that has no newline (a write
// torn by a kill or a full disk) or holds a NUL byte (blocks a machine crash left unwritten;
// JSON text never holds a raw NUL). What follows is cut off and evaluated again, which loses
// no result, only the time to recompute it.
size_t undamaged_length(const std::string& text) {
  // The first NUL, found once: searching from each line's start to the end of the text for it
  // made reading a journal quadratic in its length.
  const size_t first_nul = text.find('\0');
  size_t start = 0;
  while (start < text.size()) {
    const size_t stop = text.find('\n', start);
    if (stop == std::string::npos) return start;
    if (first_nul < stop) return start;  // no earlier line holds it, so it is in this one
    start = stop + 1;
  }
  return start;
}

// Reads LINE when it is exactly as journal_line writes it for this run, with ASCII cells:
// {"index":N,"inputs_hash":"HASH","row":["...",...]} with N below point_count, one cell per
// column, and in the cells only the escapes journal_line writes. Anything else (another
// spacing or key order, other inputs, other escapes, text beyond ASCII, a damaged or wrong
// line) returns false, and the line is read by read_json_line, which accepts every
// valid journal line and words every error: this path only saves its time (most of a resume's,
// for a journal of many points), it decides nothing.
bool read_written_line(std::string_view line, const std::string& hash, size_t point_count, size_t columns,
                       size_t& index, Row& row) {
  size_t at = 0;
  auto literal = [&](std::string_view text) {
    if (line.substr(at, text.size()) != text) return false;
    at += text.size();
    return true;
  };
  if (!literal("{\"index\":")) return false;
  const size_t digits_start = at;
  index = 0;
  while (at < line.size() && line[at] >= '0' && line[at] <= '9' && at - digits_start < 18)
    index = index * 10 + static_cast<size_t>(line[at++] - '0');
  const size_t digits = at - digits_start;
  if (digits == 0 || (digits > 1 && line[digits_start] == '0') || index >= point_count) return false;
  if (!literal(",\"inputs_hash\":\"") || !literal(hash) || !literal("\",\"row\":[")) return false;
  row.clear();
  row.reserve(columns);
  if (literal("]}")) return at == line.size() && columns == 0;
  while (true) {
    if (!literal("\"")) return false;
    std::string& cell = row.emplace_back();
    while (true) {
      if (at >= line.size()) return false;
      const char c = line[at++];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80) return false;
      if (c != '\\') {
        cell += c;
        continue;
      }
      if (at >= line.size()) return false;
      switch (line[at++]) {
        case '"': cell += '"'; break;
        case '\\': cell += '\\'; break;
        case 'b': cell += '\b'; break;
        case 'f': cell += '\f'; break;
        case 'n': cell += '\n'; break;
        case 'r': cell += '\r'; break;
        case 't': cell += '\t'; break;
        case 'u': {  // journal_line writes \u00xx for the other control characters
          if (!literal("00") || at + 2 > line.size()) return false;
          unsigned value = 0;
          for (int k = 0; k < 2; ++k) {
            const char h = line[at++];
            const int digit = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
            if (digit < 0) return false;
            value = value * 16 + static_cast<unsigned>(digit);
          }
          if (value >= 0x20) return false;
          cell += static_cast<char>(value);
          break;
        }
        default: return false;
      }
    }
    if (literal(",")) continue;
    if (!literal("]}")) return false;
    return at == line.size() && row.size() == columns;
  }
}

const char* kRemedy = "remove that line to evaluate its point again, or delete the directory to start over";

// Reads any journal line (the JSON reader): an object of index, inputs_hash and row, in any
// layout, checked field by field. UserError "WHERE: ..." naming what is wrong.
void read_json_line(std::string_view written, const std::string& where, const std::string& this_hash,
                    size_t point_count, size_t columns, size_t& index, Row& row) {
  const JsonReader reader(where);
  const json parsed = json::parse(written.begin(), written.end(), nullptr, false);
  if (parsed.is_discarded())
    reader.fail("", std::string("not a journal line: not valid JSON (expected {\"index\": N, \"inputs_hash\": "
                                "\"...\", \"row\": [...]}); ") + kRemedy);
  reader.object(parsed, "");
  for (const auto& [key, value] : parsed.items())
    if (key != "index" && key != "inputs_hash" && key != "row")
      reader.fail(tessera::quoted(key), "unexpected field (a journal line has index, inputs_hash and row); " +
                                   std::string(kRemedy));
  const std::string hash = reader.text(reader.field(parsed, "", "inputs_hash"), "inputs_hash");
  if (hash != this_hash)
    throw UserError(where + ": written for other inputs (inputs hash " + tessera::quoted(hash) + ", this run " +
                    this_hash + "): the spec, a topology file or the tool version changed; use another --out "
                    "directory or delete this one");
  index = static_cast<size_t>(reader.integer(reader.field(parsed, "", "index"), "index", 0, INT64_MAX));
  if (index >= point_count)
    reader.fail("index", "point " + std::to_string(index) + " does not belong to this sweep of " +
                             std::to_string(point_count) + " points");
  const json& cells = reader.array(reader.field(parsed, "", "row"), "row");
  if (cells.size() != columns)
    reader.fail("row", "expected " + std::to_string(columns) + " cells (one per result column), got " +
                           std::to_string(cells.size()));
  row.clear();
  row.reserve(columns);
  for (size_t cell = 0; cell < cells.size(); ++cell)
    row.push_back(reader.text(cells[cell], JsonReader::path_of("row", cell)));
}

}  // namespace

std::string journal_line(size_t index, const std::string& hash, const Row& row) {
  // Written directly (json_line.hpp): the same bytes as json_text of the object
  // {"index": N, "inputs_hash": "...", "row": [...]}, whose keys a JSON object keeps sorted.
  size_t length = 48 + hash.size();
  for (const std::string& cell : row) length += cell.size() + 3;
  std::string line;
  line.reserve(length);
  line += "{\"index\":";
  append_json_unsigned(line, index);
  line += ",\"inputs_hash\":";
  append_json_string(line, hash);
  line += ",\"row\":[";
  for (size_t cell = 0; cell < row.size(); ++cell) {
    if (cell > 0) line += ',';
    append_json_string(line, row[cell]);
  }
  line += "]}\n";
  return line;
}

void as_journaled(Row& row) {
  for (std::string& cell : row) replace_invalid_utf8(cell);
}

std::vector<Entry> Journal::read_and_repair(size_t point_count) const {
  std::vector<Entry> entries;
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) {
    if (errno == ENOENT) return entries;
    file_io::fail(path_, "cannot read the sweep's journal", errno);
  }
  const std::string text = file_io::read_text(path_, "sweep's journal", kEntryBytesPerJournalByte);
  const size_t complete = undamaged_length(text);
  if (complete < text.size() && ::truncate(path_.c_str(), static_cast<off_t>(complete)) != 0)
    file_io::fail(path_, "cannot cut off the torn last line", errno);

  std::unordered_map<size_t, size_t> line_of_index;
  const size_t columns = result_columns().size();
  size_t start = 0, line = 0;
  while (start < complete) {
    const size_t stop = text.find('\n', start);
    ++line;
    const std::string_view written(text.data() + start, stop - start);
    start = stop + 1;
    size_t index = 0;
    Row row;
    if (!read_written_line(written, hash_, point_count, columns, index, row))
      read_json_line(written, path_ + ":" + std::to_string(line), hash_, point_count, columns, index, row);
    const auto [previous, inserted] = line_of_index.try_emplace(index, line);
    if (!inserted)
      JsonReader(path_ + ":" + std::to_string(line))
          .fail("index", "point " + std::to_string(index) + " is already on line " +
                             std::to_string(previous->second) + " (a journal holds each point once); " + kRemedy);
    entries.push_back({index, std::move(row)});
  }
  return entries;
}

void Journal::append(const std::string& lines) const {
  if (lines.empty()) return;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) file_io::fail(path_, "cannot open the journal for writing", errno);
  struct stat info {};
  const bool sized = ::fstat(fd, &info) == 0;
  const int error = file_io::write_all(fd, lines);
  if (error != 0) {
    if (sized) (void)::ftruncate(fd, info.st_size);  // the rows before stay whole
    ::close(fd);
    file_io::fail(path_, "cannot write", error);
  }
  ::close(fd);
}

}  // namespace tessera::sweep
