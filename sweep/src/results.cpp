#include "tessera/sweep/results.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"

namespace tessera::sweep {

using nlohmann::json;

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

[[noreturn]] void system_error(const std::string& path, const std::string& what) {
  throw UserError(path + ": " + what + " (" + std::strerror(errno) + ")");
}

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error(path, "cannot write");
    }
    written += static_cast<size_t>(n);
  }
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

std::string journal_line(size_t index, const std::string& hash, const Row& row) {
  return json{{"index", index}, {"inputs_hash", hash}, {"row", row}}.dump() + "\n";
}

std::vector<Entry> Journal::read_and_repair(size_t point_count) const {
  std::vector<Entry> entries;
  std::error_code ignored;
  if (!std::filesystem::exists(path_, ignored)) return entries;
  const std::string text = read_all(path_);
  const size_t end = text.rfind('\n');
  const size_t complete = end == std::string::npos ? 0 : end + 1;
  if (complete < text.size()) {
    // A run killed in the middle of a write: drop the torn line, it is evaluated again.
    if (::truncate(path_.c_str(), static_cast<off_t>(complete)) != 0) system_error(path_, "cannot cut the torn last line");
  }
  std::set<size_t> seen;
  const size_t columns = result_columns().size();
  size_t start = 0;
  int line = 0;
  while (start < complete) {
    const size_t stop = text.find('\n', start);
    ++line;
    const std::string where = path_ + ":" + std::to_string(line) + ": ";
    json parsed = json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                              text.begin() + static_cast<std::ptrdiff_t>(stop), nullptr, false);
    start = stop + 1;
    if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("index") || !parsed.contains("row") ||
        !parsed.contains("inputs_hash"))
      throw UserError(where + "not a journal line (expected {index, inputs_hash, row}); delete the directory to start over");
    if (parsed["inputs_hash"] != hash_)
      throw UserError(where + "written for other inputs (inputs hash " + parsed["inputs_hash"].get<std::string>() +
                      ", this run " + hash_ + "): the spec, a topology file or the tool version changed; use another "
                      "--out directory or delete this one");
    const auto index = parsed["index"].get<size_t>();
    Row row = parsed["row"].get<Row>();
    if (index >= point_count || row.size() != columns)
      throw UserError(where + "point " + std::to_string(index) + " does not belong to this sweep of " +
                      std::to_string(point_count) + " points");
    if (!seen.insert(index).second) continue;  // never written twice; tolerated all the same
    entries.push_back({index, std::move(row)});
  }
  return entries;
}

void Journal::append(const std::string& lines) const {
  if (lines.empty()) return;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) system_error(path_, "cannot open the journal");
  try {
    write_all(fd, lines, path_);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_header() {
  std::string line;
  for (const Column& column : result_columns()) line += (line.empty() ? "" : ",") + column.name;
  return line + "\n";
}

std::string csv_row(const Row& row) {
  std::string line;
  for (size_t index = 0; index < row.size(); ++index) line += (index ? "," : "") + csv_cell(row[index]);
  return line + "\n";
}

std::string jsonl_row(const Row& row) {
  const auto& columns = result_columns();
  json object = json::object();
  for (size_t index = 0; index < row.size(); ++index) {
    if (row[index].empty()) continue;
    if (columns[index].numeric) {
      try {
        size_t used = 0;
        const double value = std::stod(row[index], &used);
        if (used == row[index].size()) {
          if (value == static_cast<double>(static_cast<int64_t>(value)) && std::abs(value) < 9e15)
            object[columns[index].name] = static_cast<int64_t>(value);
          else
            object[columns[index].name] = value;
          continue;
        }
      } catch (const std::exception&) {
      }
    }
    object[columns[index].name] = row[index];
  }
  return object.dump() + "\n";
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) system_error(temporary, "cannot write");
  try {
    write_all(fd, content, temporary);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) system_error(path, "cannot rename the temporary file into place");
}

size_t Table::column(const std::string& name) const {
  for (size_t index = 0; index < columns.size(); ++index)
    if (columns[index] == name) return index;
  std::string list;
  for (const auto& column : columns) list += (list.empty() ? "" : ", ") + column;
  throw UserError(source + ": no column '" + name + "' (the columns are: " + list + ")");
}

Table parse_csv(const std::string& text, const std::string& source) {
  Table table;
  table.source = source;
  std::vector<std::string> record;
  std::string cell;
  bool quoted = false, any = false;
  int line = 1;
  auto end_record = [&] {
    record.push_back(cell);
    cell.clear();
    if (table.columns.empty()) {
      table.columns = record;
    } else if (!(record.size() == 1 && record[0].empty())) {
      if (record.size() != table.columns.size())
        throw UserError(source + ":" + std::to_string(line) + ": " + std::to_string(record.size()) +
                        " fields, expected " + std::to_string(table.columns.size()) + " as in the header");
      table.rows.push_back(record);
    }
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      end_record();
      ++line;
      any = false;
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (any) end_record();
  if (table.columns.empty()) throw UserError(source + ": empty file (expected a CSV header line)");
  return table;
}

Table read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot read the results table");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

}  // namespace tessera::sweep
