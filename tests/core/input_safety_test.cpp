// The pieces every input check is built from: messages that stay one printable line, arithmetic
// that refuses to wrap, JSON that names the file and field, and memory estimates against a limit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <limits>
#include <string>

#include "common/scratch.hpp"
#include "tessera/core/checked_math.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/resource_limits.hpp"

using namespace tessera;

namespace {

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& error) {
    return error.what();
  }
  return "(no UserError)";
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

}  // namespace

TEST_CASE("a UserError is one printable line whatever the input held", "[core][errors]") {
  const UserError error("--algo: unknown 'ri\nng'\tand\x01 more");
  CHECK(std::string(error.what()) == "--algo: unknown 'ri ng' and\\x01 more");

  // Bytes that are not UTF-8 are escaped; well-formed multi-byte text is kept.
  CHECK(printable_message("name \xff\xfe ok") == "name \\xFF\\xFE ok");
  CHECK(printable_message("caf\xc3\xa9") == "caf\xc3\xa9");
  // An overlong encoding of '/' and a UTF-16 surrogate are not UTF-8.
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));
  CHECK(is_valid_utf8("\xf0\x9f\x98\x80"));
  CHECK_FALSE(is_valid_utf8("\xf0\x9f\x98"));  // cut short
}

TEST_CASE("a long token is cut with the count of what was left out", "[core][errors]") {
  const std::string token(200'000, 'x');
  const std::string message = UserError("--algo: unknown generator '" + token + "'").what();
  // The kept prefix: "--algo: unknown generator " then the first kMaxTokenChars of the token
  // (whose first character is the quote), then the note.
  const size_t kept_x = kMaxTokenChars - 1;
  const size_t left_out = token.size() + 2 - kMaxTokenChars;
  CHECK(message == "--algo: unknown generator '" + std::string(kept_x, 'x') + "...[" + std::to_string(left_out) +
                       " more characters]");
  CHECK(message.size() <= kMaxMessageChars + 40);

  CHECK(quoted("short") == "'short'");
  CHECK(quoted(std::string(kMaxTokenChars + 5, 'a')) ==
        "'" + std::string(kMaxTokenChars, 'a') + "'...[5 more characters]");
}

TEST_CASE("a message of many short words stops at the message limit", "[core][errors]") {
  std::string text;
  for (int word = 0; word < 1000; ++word) text += "word ";
  const std::string message = printable_message(text);
  CHECK(message.size() <= kMaxMessageChars + 40);
  CHECK(message.rfind("more characters]") == message.size() - std::string("more characters]").size());
}

TEST_CASE("checked arithmetic refuses to wrap", "[core][errors]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CHECK(checked_multiply(3'000'000'000, 3, "x") == 9'000'000'000);
  CHECK(checked_add(kMax - 1, 1, "x") == kMax);
  CHECK(message_of([] { checked_multiply(kMax / 2 + 1, 2, "--batch x --seq"); }) ==
        "--batch x --seq is too large: the product or sum overflows 64-bit integers");
  CHECK_THROWS_AS(checked_add(kMax, 1, "x"), UserError);
  CHECK_THROWS_AS(checked_multiply_unsigned(UINT64_MAX / 3 + 1, 3, "x"), UserError);
  CHECK(checked_int32(2'147'483'647, "x") == 2'147'483'647);
  CHECK_THROWS_AS(checked_int32(4'294'967'297, "--gpus"), UserError);
  CHECK(message_of([] { require_finite(std::numeric_limits<double>::infinity(), "--latency-us"); }) ==
        "--latency-us: expected a finite number (got inf)");
  CHECK_THROWS_AS(require_finite(std::nan(""), "x"), UserError);
  CHECK_NOTHROW(require_finite(1e308, "x"));
}

TEST_CASE("JSON syntax errors name the file, line and column", "[core][json]") {
  // Line 3, column 12 is the stray comma's successor '}' (the parser reports the byte it stopped at).
  const std::string message = message_of([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": 2,}\n", "run.json"); });
  CHECK(message.rfind("run.json:3:", 0) == 0);
  CHECK(message.find("not valid JSON") != std::string::npos);
  // A number that overflows a double is refused, not thrown as a library error.
  // The overflowing number's place: line 2, column 11.
  CHECK(message_of([] { parse_json_text("{\n  \"peak\": 1e999}", "cal.json"); }).rfind("cal.json:2:11: ", 0) == 0);
  CHECK(message_of([] { parse_json_text("", "empty.json"); }).rfind("empty.json:1:1: ", 0) == 0);
}

TEST_CASE("JSON fields are checked for type, finiteness and range", "[core][json]") {
  const nlohmann::json document = nlohmann::json::parse(
      R"({"gpu": 5, "ops": [{"peer": "x"}, {"peer": 3.5}, {"peer": 1e30}, {"peer": 7}], "ok": true})");
  const JsonReader reader("s.json");
  CHECK(message_of([&] { reader.text(document["gpu"], "gpu"); }) == "s.json: gpu: expected a string, got number");
  const auto& ops = reader.array(reader.field(document, "", "ops"), "ops");
  auto peer = [&](size_t i) { return reader.integer(ops[i]["peer"], JsonReader::path_of("ops", i) + ".peer", 0, 15); };
  CHECK(message_of([&] { peer(0); }) == "s.json: ops[0].peer: expected a whole number from 0 to 15, got string");
  CHECK(message_of([&] { peer(1); }) == "s.json: ops[1].peer: expected a whole number from 0 to 15");
  CHECK(message_of([&] { peer(2); }) == "s.json: ops[2].peer: expected a whole number from 0 to 15");
  CHECK(peer(3) == 7);
  CHECK(message_of([&] { reader.field(document, "", "missing"); }) == "s.json: missing: missing");
  CHECK(message_of([&] { reader.positive(nlohmann::json(0.0), "link.bytes_per_s"); }) ==
        "s.json: link.bytes_per_s: expected a positive number");
  CHECK(reader.boolean(document["ok"], "ok"));
}

TEST_CASE("JSON output never throws on text that is not UTF-8", "[core][json]") {
  const nlohmann::json document = {{"name", std::string("bad \xff name")}};
  CHECK(json_text(document) == "{\"name\":\"bad \xef\xbf\xbd name\"}");
}

TEST_CASE("reading a JSON file names it when it cannot be read", "[core][json]") {
  const std::string missing = test_support::scratch_path("input_safety_missing.json");
  std::remove(missing.c_str());
  CHECK(message_of([&] { read_json_file(missing, "calibration file"); }) ==
        missing + ": cannot open the calibration file");
  const std::string folder = test_support::scratch_path("");
  CHECK(message_of([&] { read_json_file(folder, "schedule file"); }).find("is a directory") != std::string::npos);
  const std::string good = test_support::scratch_path("input_safety_good.json");
  std::ofstream(good) << "{\"a\": [1, 2]}";
  CHECK(read_json_file(good, "file")["a"][1] == 2);
}

TEST_CASE("memory estimates are checked against the limit before allocating", "[core][limits]") {
  {
    const ScopedEnv limit("TESSERA_MEMORY_LIMIT", "1GB");
    CHECK(memory_limit_bytes() == 1'000'000'000);
    CHECK_NOTHROW(require_memory(0.9e9, "a ring on 8 GPUs"));
    CHECK(message_of([] { require_memory(12.3e9, "a ring on 1024 GPUs"); })
              == "a ring on 1024 GPUs needs about 12.3 GB of memory, more than the limit of 1 GB (set by "
                 "TESSERA_MEMORY_LIMIT)");
    // An estimate computed in double never wraps: 1e30 bytes is refused, not taken for a small number.
    CHECK_THROWS_AS(require_memory(1e30, "x"), UserError);
    CHECK_THROWS_AS(require_memory(std::numeric_limits<double>::infinity(), "x"), UserError);
  }
  {
    const ScopedEnv limit("TESSERA_MEMORY_LIMIT", "2GiB");
    CHECK(memory_limit_bytes() == 2ull << 30);
  }
  {
    const ScopedEnv limit("TESSERA_MEMORY_LIMIT", "lots");
    CHECK(message_of([] { memory_limit_bytes(); }).rfind("TESSERA_MEMORY_LIMIT: ", 0) == 0);
  }
  // Without the variable: three quarters of the machine's memory, as /proc/meminfo gives it
  // (MemTotal leaves out the kernel's reserve, so it is a little under sysconf's figure).
  unsetenv("TESSERA_MEMORY_LIMIT");
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double total_kib = 0;
  while (meminfo >> key && key != "MemTotal:") meminfo.ignore(1 << 10, '\n');
  meminfo >> total_kib;
  REQUIRE(total_kib > 0);
  const double expected = total_kib * 1024 * 0.75;
  CHECK(static_cast<double>(memory_limit_bytes()) >= expected);
  CHECK(static_cast<double>(memory_limit_bytes()) <= expected * 1.1);
  CHECK(format_bytes(999) == "999 B");
  CHECK(format_bytes(1.5e9) == "1.5 GB");
}
