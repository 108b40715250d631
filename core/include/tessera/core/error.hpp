#pragma once
// Errors that reach the user. A UserError is bad input (a flag, a file, a schedule): the
// front ends print its message on one line and exit with code 2. Anything else is a bug.
//
// The message is made printable when the error is built, so no front end has to: it becomes one
// line, bytes that are not UTF-8 (or are control characters) are shown as \xNN, any single token
// longer than kMaxTokenChars is cut with a count of what was left out (a user who pasted 200,000
// characters into a flag does not want them echoed), and the whole stays under kMaxMessageChars.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

inline constexpr size_t kMaxTokenChars = 160;
inline constexpr size_t kMaxMessageChars = 480;

// `text` as one printable line within the limits above.
std::string printable_message(std::string_view text);
// One token for a message, quoted: 'text', cut to kMaxTokenChars with the count of what was cut.
std::string quoted(std::string_view text);
// Exact matches, so that a call with a std::string picks these over std::quoted (found by ADL).
inline std::string quoted(const std::string& text) { return quoted(std::string_view(text)); }
inline std::string quoted(std::string& text) { return quoted(std::string_view(text)); }
inline std::string quoted(const char* text) { return quoted(std::string_view(text)); }
// Whether `text` is well-formed UTF-8 (what JSON output needs).
bool is_valid_utf8(std::string_view text);

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(printable_message(message)) {}
};

}  // namespace tessera
