#include "tessera/core/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace tessera {

namespace {

// The length of the UTF-8 sequence starting at `at`, 0 when the bytes there are not one
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_sequence_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint32_t code = 0;
  if ((lead & 0xE0) == 0xC0) length = 2, code = lead & 0x1F;
  else if ((lead & 0xF0) == 0xE0) length = 3, code = lead & 0x0F;
  else if ((lead & 0xF8) == 0xF0) length = 4, code = lead & 0x07;
  else return 0;
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(at + i) & 0x3F);
  }
  static constexpr uint32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

void append_escaped_byte(std::string& out, uint8_t byte) {
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, "\\x%02X", byte);
  out += escaped;
}

// One line of printable UTF-8: newlines and tabs become spaces, other control bytes and bytes
// that are not UTF-8 become \xNN.
std::string printable_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const auto byte = static_cast<uint8_t>(text[at]);
    if (byte == '\n' || byte == '\r' || byte == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      ++at;
      continue;
    }
    if (byte < 0x20 || byte == 0x7F) {
      append_escaped_byte(out, byte);
      ++at;
      continue;
    }
    const size_t length = utf8_sequence_length(text, at);
    if (length == 0) {
      append_escaped_byte(out, byte);
      ++at;
      continue;
    }
    out.append(text.substr(at, length));
    at += length;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool is_continuation(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

// `text` cut to at most `limit` bytes without splitting a UTF-8 sequence.
std::string_view cut(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && is_continuation(text[end])) --end;
  return text.substr(0, end);
}

std::string cut_note(size_t left_out) { return "...[" + std::to_string(left_out) + " more characters]"; }

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const size_t length = utf8_sequence_length(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string printable_message(std::string_view text) {
  const std::string line = printable_line(text);
  // Cut every token (a run without spaces) longer than kMaxTokenChars.
  std::string out;
  out.reserve(std::min(line.size(), kMaxMessageChars + 64));
  for (size_t at = 0; at < line.size();) {
    size_t end = line.find(' ', at);
    if (end == std::string::npos) end = line.size();
    const std::string_view token = std::string_view(line).substr(at, end - at);
    if (token.size() > kMaxTokenChars) {
      const std::string_view kept = cut(token, kMaxTokenChars);
      out.append(kept);
      out += cut_note(token.size() - kept.size());
    } else {
      out.append(token);
    }
    if (end < line.size()) out += ' ';
    at = end + 1;
  }
  if (out.size() > kMaxMessageChars) {
    const std::string_view kept = cut(out, kMaxMessageChars);
    out = std::string(kept) + cut_note(out.size() - kept.size());
  }
  return out;
}

std::string quoted(std::string_view text) {
  const std::string line = printable_line(text);
  if (line.size() <= kMaxTokenChars) return "'" + line + "'";
  const std::string_view kept = cut(line, kMaxTokenChars);
  return "'" + std::string(kept) + "'" + cut_note(line.size() - kept.size());
}

}  // namespace tessera
