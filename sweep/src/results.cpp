#include "tessera/sweep/results.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>


#include "file_io.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/problem.hpp"  // parse_count
#include "tessera/sweep/json_line.hpp"

namespace tessera::sweep {


namespace {

uint64_t fnv1a(uint64_t hash, const std::string& text) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string inputs_hash(const Spec& spec, const std::string& tool_version) {
  uint64_t hash = 14695981039346656037ull;
  hash = fnv1a(hash, "tessera " + tool_version + "\n");
  hash = fnv1a(hash, spec.text);
  std::set<std::string> topologies;
  topologies.insert(spec.fixed[static_cast<size_t>(Field::topology)]);
  for (const AxisGroup& group : spec.axes)
    for (size_t f = 0; f < group.fields.size(); ++f)
      if (group.fields[f] == Field::topology) topologies.insert(group.values[f].begin(), group.values[f].end());
  for (const std::string& name : topologies) {
    std::error_code ignored;
    if (!name.empty() && std::filesystem::is_regular_file(name, ignored)) hash = fnv1a(hash, name + "\n" + read_all(name));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

namespace {

// CELL as a CSV field, appended: quoted, with its quotes doubled, when it holds a comma, a quote
// or a newline (RFC 4180); as it is otherwise. One pass over the (short) cell.
void append_csv_cell(std::string& line, const std::string& cell) {
  if (std::none_of(cell.begin(), cell.end(), [](char c) { return c == ',' || c == '"' || c == '\n'; })) {
    line += cell;
    return;
  }
  line += '"';
  for (char c : cell) {
    if (c == '"') line += '"';
    line += c;
  }
  line += '"';
}

}  // namespace

std::string csv_header() {
  std::string line;
  for (const Column& column : result_columns()) line += (line.empty() ? "" : ",") + column.name;
  return line + "\n";
}

std::string csv_row(const Row& row) {
  // Appended in place: a string per cell was a good part of the time this took.
  size_t length = row.size() + 1;
  for (const std::string& cell : row) length += cell.size();
  std::string line;
  line.reserve(length);
  for (size_t index = 0; index < row.size(); ++index) {
    if (index > 0) line += ',';
    append_csv_cell(line, row[index]);
  }
  line += '\n';
  return line;
}

namespace {

// The result columns in the order of their names, each with its key as JSON text ("name":):
// a JSON object keeps its keys sorted, so that is the order json_text wrote them in.
struct JsonKey {
  size_t column = 0;
  std::string text;
};

std::vector<JsonKey> make_json_keys() {
  const auto& columns = result_columns();
  std::vector<JsonKey> keys;
  for (size_t index = 0; index < columns.size(); ++index) {
    JsonKey key{index, ""};
    append_json_string(key.text, columns[index].name);
    key.text += ':';
    keys.push_back(std::move(key));
  }
  std::sort(keys.begin(), keys.end(),
            [&](const JsonKey& x, const JsonKey& y) { return columns[x.column].name < columns[y.column].name; });
  return keys;
}

const std::vector<JsonKey>& json_keys() {
  static const std::vector<JsonKey> keys = make_json_keys();
  return keys;
}

// What std::stod reads from all of CELL: false when it reads nothing, or not all of it, or the
// number is out of double's range (stod throws). The cells tessera writes ([-]digits, with a
// fraction or an exponent) are read by std::from_chars, which gives the same correctly rounded
// double as strtod in the C locale tessera runs in, at a fraction of its cost (strtod was most of writing a row); any other
// text (spaces, '+', hex, inf, nan, '.5') and any result near the ends of double's range (where
// strtod reports ERANGE) is read by std::stod itself.
bool whole_cell_number(const std::string& cell, double& value) {
  size_t at = 0;
  auto digits = [&] {
    const size_t start = at;
    while (at < cell.size() && cell[at] >= '0' && cell[at] <= '9') ++at;
    return at - start;
  };
  if (at < cell.size() && cell[at] == '-') ++at;
  const size_t mantissa_start = at;
  bool simple = digits() > 0;
  if (simple && at < cell.size() && cell[at] == '.') {
    ++at;
    simple = digits() > 0;
  }
  const size_t mantissa_end = at;
  if (simple && at < cell.size() && (cell[at] == 'e' || cell[at] == 'E')) {
    ++at;
    if (at < cell.size() && (cell[at] == '+' || cell[at] == '-')) ++at;
    const size_t exponent_digits = digits();
    simple = exponent_digits > 0 && exponent_digits <= 4;
  }
  if (simple && at == cell.size()) {
    const char* end = cell.data() + cell.size();
    const auto result = std::from_chars(cell.data(), end, value);
    const bool nonzero_digit = cell.find_first_of("123456789", mantissa_start) < mantissa_end;
    if (result.ec == std::errc() && result.ptr == end && std::isfinite(value) &&
        (value == 0 ? !nonzero_digit : std::abs(value) >= std::numeric_limits<double>::min()))
      return true;
  }
  try {
    size_t used = 0;
    value = std::stod(cell, &used);
    return used == cell.size();
  } catch (const std::exception&) {
    return false;
  }
}

// A numeric column's cell as a JSON number when all of it reads as one (a whole number below
// 9e15 as an integer, so 4 stays 4 and not 4.0), else as a string.
void append_json_cell(std::string& line, const std::string& cell, bool numeric) {
  double value = 0;
  if (numeric && whole_cell_number(cell, value)) {
    // The range test first: casting a double past int64's range is undefined.
    if (std::abs(value) < 9e15 && value == static_cast<double>(static_cast<int64_t>(value)))
      append_json_integer(line, static_cast<int64_t>(value));
    else
      append_json_double(line, value);
    return;
  }
  append_json_string(line, cell);
}

}  // namespace

std::string jsonl_row(const Row& row) {
  // Written directly (json_line.hpp): the same bytes as json_text of the object of the row's
  // non-empty cells, without building that object.
  const auto& columns = result_columns();
  std::string line = "{";
  for (const JsonKey& key : json_keys()) {
    if (key.column >= row.size() || row[key.column].empty()) continue;
    if (line.size() > 1) line += ',';
    line += key.text;
    append_json_cell(line, row[key.column], columns[key.column].numeric);
  }
  line += "}\n";
  return line;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) file_io::fail(temporary, "cannot write", errno);
  int error = file_io::write_all(fd, content);
  // A write that fails on a network file system may only say so at fsync or close.
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());  // a half-written temporary file would only hold space
    file_io::fail(temporary, "cannot write", error);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(temporary.c_str());
    file_io::fail(path, "cannot rename the temporary file into place", error);
  }
  file_io::sync_directory_of(path);
}

size_t Table::column(const std::string& name) const {
  for (size_t index = 0; index < columns.size(); ++index)
    if (columns[index] == name) return index;
  std::string list;
  for (const auto& column : columns) list += (list.empty() ? "" : ", ") + column;
  throw UserError(source + ": no column '" + name + "' (the columns are: " + list + ")");
}

namespace {

// A cell tessera sweep writes as a number: what format_number writes (shortest round trip,
// inf, nan), what std::to_string writes, or for an input column the spec's text, which the spec
// reader accepted as a number or a count (gpus: 1K).
bool numeric_cell(const std::string& column, const std::string& cell) {
  if (cell.empty()) return true;
  try {
    size_t used = 0;
    (void)std::stod(cell, &used);
    if (used == cell.size()) return true;
  } catch (const std::exception&) {
  }
  if (column != "gpus") return false;
  try {
    return parse_count(cell) > 0;
  } catch (const UserError&) {
    return false;
  }
}

// Columns of the file that tessera sweep writes as numbers, by position.
std::vector<bool> numeric_columns(const std::vector<std::string>& header) {
  std::vector<bool> numeric(header.size(), false);
  for (size_t index = 0; index < header.size(); ++index)
    for (const Column& column : result_columns())
      if (column.numeric && column.name == header[index]) numeric[index] = true;
  return numeric;
}

// Cells take a std::string each, and a cell can be as short as its comma.
constexpr double kTableBytesPerCsvByte = 1 + sizeof(std::string);

}  // namespace

Table parse_csv(const std::string& text, const std::string& source) {
  Table table;
  table.source = source;
  std::vector<bool> numeric;
  std::vector<std::string> record;
  std::string cell;
  bool quoted_cell = false, after_quote = false, any = false;
  size_t line = 1, record_line = 1;
  auto where = [&](size_t at) { return source + ":" + std::to_string(at) + ": "; };
  auto end_record = [&] {
    record.push_back(cell);
    cell.clear();
    if (table.columns.empty()) {
      std::set<std::string> names;
      for (size_t index = 0; index < record.size(); ++index) {
        if (record[index].empty())
          throw UserError(where(record_line) + "column " + std::to_string(index + 1) + " of the header has no name");
        if (!names.insert(record[index]).second)
          throw UserError(where(record_line) + "column " + tessera::quoted(record[index]) + " appears twice in the header");
      }
      table.columns = record;
      numeric = numeric_columns(table.columns);
    } else if (!(record.size() == 1 && record[0].empty())) {
      if (record.size() != table.columns.size())
        throw UserError(where(record_line) + std::to_string(record.size()) + " fields, expected " +
                        std::to_string(table.columns.size()) + " as in the header");
      for (size_t index = 0; index < record.size(); ++index)
        if (numeric[index] && !numeric_cell(table.columns[index], record[index]))
          throw UserError(where(record_line) + table.columns[index] + ": " + tessera::quoted(record[index]) +
                          " is not a number (tessera sweep writes a number or nothing in this column)");
      table.rows.push_back(record);
      table.lines.push_back(record_line);
    }
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (c == '\n') ++line;
    if (quoted_cell) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted_cell = false;
        after_quote = true;
      } else {
        cell += c;
      }
      continue;
    }
    if (c == ',') {
      record.push_back(cell);
      cell.clear();
      after_quote = false;
    } else if (c == '\n') {
      end_record();
      record_line = line;
      any = after_quote = false;
    } else if (c == '\r') {
      // CRLF line ends
    } else if (after_quote) {
      throw UserError(where(line) + "text after a closing quote (a quote inside a quoted field is written \"\")");
    } else if (c == '"' && cell.empty()) {
      quoted_cell = true;
    } else {
      cell += c;
    }
  }
  if (quoted_cell) throw UserError(where(record_line) + "a quoted field is not closed before the end of the file");
  if (any) end_record();
  if (table.columns.empty()) throw UserError(source + ": empty file (expected a CSV header line)");
  return table;
}

Table read_csv(const std::string& path) {
  return parse_csv(file_io::read_text(path, "results table", kTableBytesPerCsvByte), path);
}

}  // namespace tessera::sweep
