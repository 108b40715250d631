#pragma once
// One-line notes about deprecated spellings (`--bandwidth-gbps`, `nic_gbps: 50`) that still
// work. Each note is printed once per run, however many files, points or threads meet the
// spelling: a sweep of a thousand points would otherwise repeat it a thousand times. Notes go
// to stderr, after the value was read successfully, so an error stays the only line there.
#include <iosfwd>
#include <string>

namespace tessera {

// Prints "tessera: note: <text>" on `out` the first time `key` is noted in this process (the
// key says what is deprecated, e.g. "yaml:nic_gbps"); returns whether it printed. Thread-safe.
bool note_deprecated(const std::string& key, const std::string& text);
bool note_deprecated(const std::string& key, const std::string& text, std::ostream& out);

}  // namespace tessera
