// The sweep's JSON lines written without a JSON object (json_line.hpp): the string escaping
// against hand-written expected texts, and the journal and results.jsonl lines against what
// nlohmann's dump (json_text) writes for the same values, over awkward and random cells.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/json_io.hpp"
#include "tessera/sweep/evaluate.hpp"
#include "tessera/sweep/json_line.hpp"
#include "tessera/sweep/results.hpp"

using namespace tessera;
using namespace tessera::sweep;
using nlohmann::json;

namespace {

std::string escaped(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD, what an invalid sequence becomes

// The lines as they were written before json_line.hpp: a JSON object per row, dumped.
std::string dumped_journal_line(size_t index, const std::string& hash, const Row& row) {
  return json_text(json{{"index", index}, {"inputs_hash", hash}, {"row", row}}) + "\n";
}

std::string dumped_jsonl_row(const Row& row) {
  const auto& columns = result_columns();
  json object = json::object();
  for (size_t index = 0; index < row.size(); ++index) {
    if (row[index].empty()) continue;
    if (columns[index].numeric) {
      try {
        size_t used = 0;
        const double value = std::stod(row[index], &used);
        if (used == row[index].size()) {
          if (std::abs(value) < 9e15 && value == static_cast<double>(static_cast<int64_t>(value)))
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
  return json_text(object) + "\n";
}

// Bytes that exercise every branch of the escaping and of the UTF-8 check: plain text, the
// characters JSON escapes, DEL, continuation bytes, the lead bytes with narrowed second-byte
// ranges (E0, ED, F0, F4), bytes that never lead (C0, C1, F5..FF).
const std::vector<unsigned char> kAwkwardBytes = {'a', '0', ' ', '.', '-', 'e', '"',  '\\', '/',  '\b', '\f', '\n',
                                                  '\r', '\t', 0x00, 0x01, 0x1F, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                                  0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0,
                                                  0xF3, 0xF4, 0xF5, 0xFF};

std::string random_text(std::mt19937_64& random, size_t max_length) {
  std::uniform_int_distribution<size_t> length(0, max_length), pick(0, kAwkwardBytes.size() - 1);
  std::string text(length(random), ' ');
  for (char& c : text) c = static_cast<char>(kAwkwardBytes[pick(random)]);
  return text;
}

}  // namespace

TEST_CASE("JSON strings: quotes, backslash and control characters escaped, UTF-8 kept", "[sweep][json_line]") {
  CHECK(escaped("") == "\"\"");
  CHECK(escaped("ring 8x4, ok") == "\"ring 8x4, ok\"");
  CHECK(escaped("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(escaped("a\\b") == "\"a\\\\b\"");
  CHECK(escaped("/") == "\"/\"");  // the solidus stays as it is
  CHECK(escaped("\b\f\n\r\t") == "\"\\b\\f\\n\\r\\t\"");
  CHECK(escaped(std::string("\0", 1)) == "\"\\u0000\"");
  CHECK(escaped("\x01\x1a\x1f") == "\"\\u0001\\u001a\\u001f\"");  // lowercase hex
  CHECK(escaped("\x7f") == "\"\x7f\"");                            // DEL is not a control character to JSON
  CHECK(escaped("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  CHECK(escaped("\xF4\x8F\xBF\xBF") == "\"\xF4\x8F\xBF\xBF\"");  // U+10FFFF, the last code point
}

TEST_CASE("JSON strings: each invalid UTF-8 sequence becomes one U+FFFD", "[sweep][json_line]") {
  CHECK(escaped("\xFF") == "\"" + kFffd + "\"");
  CHECK(escaped("a\x80z") == "\"a" + kFffd + "z\"");          // a continuation byte alone
  CHECK(escaped("a\xC3") == "\"a" + kFffd + "\"");            // cut off by the end
  CHECK(escaped("\xE2\x82") == "\"" + kFffd + "\"");          // two of three bytes: one replacement
  CHECK(escaped("\xC3(") == "\"" + kFffd + "(\"");             // the breaking byte is kept
  CHECK(escaped("\xE2\x82\"") == "\"" + kFffd + "\\\"\"");     // and escaped when it must be
  CHECK(escaped("\xC0\xAF") == "\"" + kFffd + kFffd + "\"");   // overlong '/': C0 never leads
  CHECK(escaped("\xE0\x80\x80") == "\"" + kFffd + kFffd + kFffd + "\"");  // overlong: E0 needs A0..BF
  CHECK(escaped("\xED\xA0\x80") == "\"" + kFffd + kFffd + kFffd + "\"");  // a surrogate
  CHECK(escaped("\xF4\x90\x80\x80") == "\"" + kFffd + kFffd + kFffd + kFffd + "\"");  // above U+10FFFF
  CHECK(escaped("\xF0\x9F\x98") == "\"" + kFffd + "\"");

  std::string valid = "caf\xC3\xA9";
  CHECK_FALSE(replace_invalid_utf8(valid));
  CHECK(valid == "caf\xC3\xA9");
  std::string invalid = "a\xFF" "b\xE2\x82";
  CHECK(replace_invalid_utf8(invalid));
  CHECK(invalid == "a" + kFffd + "b" + kFffd);
}

TEST_CASE("JSON strings are nlohmann's dump, and read back as replace_invalid_utf8 says", "[sweep][json_line]") {
  std::mt19937_64 random(18);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string text = random_text(random, 10);
    const std::string reference = json_text(json(text));
    INFO("trial " << trial << ", " << json(text).dump(-1, ' ', true, json::error_handler_t::replace));
    REQUIRE(escaped(text) == reference);
    std::string repaired = text;
    const bool changed = replace_invalid_utf8(repaired);
    REQUIRE(repaired == json::parse(reference).get<std::string>());
    REQUIRE(changed == (repaired != text));
  }
}

TEST_CASE("JSON numbers are nlohmann's dump", "[sweep][json_line]") {
  auto integer = [](int64_t value) {
    std::string out;
    append_json_integer(out, value);
    return out;
  };
  auto whole = [](uint64_t value) {
    std::string out;
    append_json_unsigned(out, value);
    return out;
  };
  auto real = [](double value) {
    std::string out;
    append_json_double(out, value);
    return out;
  };
  CHECK(integer(0) == "0");
  CHECK(integer(-42) == "-42");
  CHECK(integer(std::numeric_limits<int64_t>::min()) == "-9223372036854775808");
  CHECK(whole(std::numeric_limits<uint64_t>::max()) == "18446744073709551615");
  CHECK(real(0.25) == "0.25");
  CHECK(real(2) == "2.0");
  CHECK(real(1e-5) == "1e-05");
  CHECK(real(1e20) == "1e+20");
  CHECK(real(std::nan("")) == "null");
  CHECK(real(-std::numeric_limits<double>::infinity()) == "null");
  std::mt19937_64 random(18);
  std::uniform_real_distribution<double> exponent(-320, 320);
  for (int trial = 0; trial < 20000; ++trial) {
    // Random bit patterns (every exponent, NaNs included) and random magnitudes.
    uint64_t bits = random();
    double value = 0;
    std::memcpy(&value, &bits, sizeof value);
    REQUIRE(real(value) == json_text(json(value)));
    const double scaled = std::pow(10.0, exponent(random)) * (trial % 2 ? -1 : 1);
    REQUIRE(real(scaled) == json_text(json(scaled)));
    const auto signed_value = static_cast<int64_t>(random());
    REQUIRE(integer(signed_value) == json_text(json(signed_value)));
    REQUIRE(whole(bits) == json_text(json(bits)));
  }
}

TEST_CASE("journal and results.jsonl lines are the bytes a dumped JSON object gave", "[sweep][json_line]") {
  const auto& columns = result_columns();
  std::set<std::string> names;
  for (const Column& column : columns) names.insert(column.name);
  REQUIRE(names.size() == columns.size());  // one key per column, as in a JSON object

  // Cells a numeric column may hold, read as numbers or kept as text.
  // Text std::stod reads in part, in full, or not at all, near the ends of double's range
  // (where it throws), and the forms format_number and printf write.
  std::vector<std::string> numeric_cells = {
      "", "0", "4", "-0", "-0.0", "007", "1.5", "0.1", "1e-05", "1e+20", "1E5", "1e5", "9e15", "8999999999999999",
      "9007199254740993", "-3.25e-300", "2.2250738585072014e-308", "2.2250738585072011e-308", "4.9e-324", "1e-400",
      "0e-400", "0.000e99999", "1e999", "1.7976931348623157e308", "1.7976931348623159e308", "1e00001", "1e-0005",
      "nan", "-inf", "infinity", "NaN", " 5", "5 ", "+5", "0x10", "0x1p3", ".5", "5.", "-.5", "1e", "1e+", "-", "--1",
      "1,5", "12abc", "abc", "1K", "1_000", "\xC3\xA9", "1e5\n"};
  std::mt19937_64 random(18);
  std::uniform_real_distribution<double> exponent(-310, 310);
  for (int k = 0; k < 400; ++k) {
    const double value = std::pow(10.0, exponent(random)) * (k % 3 == 0 ? -1 : 1);
    char text[64];
    numeric_cells.push_back(format_number(value));
    std::snprintf(text, sizeof text, "%.17g", value);
    numeric_cells.push_back(text);
    std::snprintf(text, sizeof text, "%.3e", value);
    numeric_cells.push_back(text);
    std::snprintf(text, sizeof text, "%.0f", std::fmod(value, 1e18));
    numeric_cells.push_back(text);
  }
  std::uniform_int_distribution<size_t> pick_numeric(0, numeric_cells.size() - 1);
  for (int trial = 0; trial < 2000; ++trial) {
    Row row(columns.size());
    for (size_t index = 0; index < columns.size(); ++index) {
      if (columns[index].numeric && random() % 4 != 0)
        row[index] = numeric_cells[pick_numeric(random)];
      else
        row[index] = random() % 3 == 0 ? std::string() : random_text(random, 8);
    }
    if (trial == 0) std::fill(row.begin(), row.end(), std::string());  // an object with no key: {}
    const size_t index = static_cast<size_t>(random() % 100000);
    INFO("trial " << trial);
    REQUIRE(journal_line(index, "0123456789abcdef", row) == dumped_journal_line(index, "0123456789abcdef", row));
    REQUIRE(jsonl_row(row) == dumped_jsonl_row(row));
  }
  CHECK(jsonl_row(Row(columns.size())) == "{}\n");
}

TEST_CASE("a row kept in memory is the row its journal line reads back as", "[sweep][json_line]") {
  const auto dir = std::filesystem::path(SWEEP_SCRATCH) / "lib-json_line";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Journal journal((dir / "journal.jsonl").string(), "0123456789abcdef");
  Row row(result_columns().size());
  row[column_index("status")] = "error: bad \xFF byte, \"quoted\"\n";
  row[column_index("schedule")] = "caf\xC3\xA9 \xE2\x82";
  row[column_index("time_s")] = "0.5";
  journal.append(journal_line(7, "0123456789abcdef", row));
  const auto entries = journal.read_and_repair(8);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].index == 7);
  as_journaled(row);
  CHECK(row[column_index("status")] == "error: bad " + kFffd + " byte, \"quoted\"\n");
  CHECK(row[column_index("schedule")] == "caf\xC3\xA9 " + kFffd);
  CHECK(entries[0].row == row);
}

namespace {

std::filesystem::path journal_scratch(const std::string& name) {
  const auto dir = std::filesystem::path(SWEEP_SCRATCH) / ("lib-json_line-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir / "journal.jsonl";
}

const std::string kHash = "0123456789abcdef";

}  // namespace

TEST_CASE("the journal reads back each row it was written, awkward cells included", "[sweep][json_line]") {
  const auto path = journal_scratch("roundtrip");
  const Journal journal(path.string(), kHash);
  std::mt19937_64 random(18);
  std::vector<Row> rows;
  std::string lines;
  for (size_t index = 0; index < 300; ++index) {
    Row row(result_columns().size());
    for (std::string& cell : row) cell = random() % 2 ? random_text(random, 6) : std::string();
    if (index % 3 == 0)  // only ASCII: the lines a sweep writes most
      for (std::string& cell : row)
        for (char& c : cell) c = static_cast<char>(static_cast<unsigned char>(c) & 0x7F);
    lines += journal_line(index * 7, kHash, row);
    as_journaled(row);
    rows.push_back(row);
  }
  journal.append(lines);
  const auto entries = journal.read_and_repair(300 * 7);
  REQUIRE(entries.size() == rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    INFO("row " << k);
    CHECK(entries[k].index == k * 7);
    CHECK(entries[k].row == rows[k]);
  }
}

TEST_CASE("the journal reads valid lines in another layout, and refuses near misses as before",
          "[sweep][json_line]") {
  const size_t columns = result_columns().size();
  Row row(columns);
  row[0] = "A/\xC3\xA9\x1f\xF0\x9F\x98\x80";
  const std::string cells = [&] {
    std::string text = "[\"\\u0041\\/\\u00e9\\u001F\\ud83d\\ude00\"";
    for (size_t k = 1; k < columns; ++k) text += ", \"\"";
    return text + "]";
  }();
  // Keys in another order, spaces, escapes journal_line does not write: all valid JSON.
  const std::string other_layout = "{ \"row\": " + cells + ", \"index\" : 5, \"inputs_hash\": \"" + kHash + "\" }\n";
  {
    const auto path = journal_scratch("layout");
    const Journal journal(path.string(), kHash);
    journal.append(other_layout);
    const auto entries = journal.read_and_repair(6);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].index == 5);
    CHECK(entries[0].row == row);
  }
  // Lines that differ from a written one by a little: each refused with the message the JSON
  // reader gives, naming the file and line.
  Row plain(columns, "x");
  const std::string good = journal_line(1, kHash, plain);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with("[\"x\"", "[\"x\ty\""), ":2: not a journal line: not valid JSON"},   // a raw tab in a cell
      {with("[\"x\"", "[\"x\\q\""), ":2: not a journal line: not valid JSON"},   // no such escape
      {with("[\"x\"", "[\"x\xff\""), ":2: not a journal line: not valid JSON"},  // not UTF-8
      {with("\"index\":1", "\"index\":01"), ":2: not a journal line: not valid JSON"},
      {with("\"index\":1", "\"index\":1000000000000000000000"), ":2: index: "},
      {with("\"index\":1", "\"index\":9"), ":2: index: point 9 does not belong to this sweep of 9 points"},
      {with("[\"x\",", "["), ":2: row: expected " + std::to_string(columns) + " cells"},
      {with("0123456789abcdef", "0123456789abcdeF"), ":2: written for other inputs"},
      {good, ":2: index: point 1 is already on line 1"},
  };
  for (const auto& [line, message] : cases) {
    INFO(line);
    const auto path = journal_scratch("miss");
    const Journal journal(path.string(), kHash);
    journal.append(good + line);
    CHECK_THROWS_WITH(journal.read_and_repair(9), Catch::Contains(path.string() + message));
  }
}
