#pragma once
// JSON text written straight into a string, for the sweep's per-point lines (the journal and
// results.jsonl): no JSON object is built per row. Each piece is byte for byte what json_text
// (core/json_io.hpp: nlohmann's dump, compact, UTF-8 kept as it is, invalid UTF-8 replaced)
// writes for the same value, so the files are the same bytes as when they were dumped objects.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::sweep {

// TEXT as a JSON string, with its quotes: '"' and '\\' escaped, \b \f \n \r \t by name, the
// other control characters (below 0x20) as \u00xx (lowercase hex), DEL and valid UTF-8 as they
// are, and each invalid UTF-8 sequence (its longest start that could still have been valid, or
// one bad byte) as U+FFFD.
void append_json_string(std::string& out, std::string_view text);

// TEXT as it reads back from append_json_string's output: each invalid UTF-8 sequence replaced
// by U+FFFD the same way. Returns false, leaving TEXT alone, when it is valid UTF-8 already.
bool replace_invalid_utf8(std::string& text);

void append_json_integer(std::string& out, int64_t value);
void append_json_unsigned(std::string& out, uint64_t value);
// The shortest text that reads back as VALUE, in nlohmann's format (1.5, 2.0, 1e-05, 1e+20);
// null for infinities and NaN.
void append_json_double(std::string& out, double value);

}  // namespace tessera::sweep
