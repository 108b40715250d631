#include "tessera/sweep/json_line.hpp"

#include <charconv>
#include <cmath>

// The double formatter nlohmann's dump uses (Grisu2 and its layout of the digits). It sits in
// the library's detail namespace; calling it is what makes a number here the same bytes as a
// dumped one. json_line_test compares the two over many doubles, so a library version that
// formats differently fails there rather than changing the files silently.
#include <nlohmann/json.hpp>

namespace tessera::sweep {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// At TEXT[AT], a byte of 0x80 or above: the length of the valid UTF-8 sequence that starts
// there, or 0 when none does, with `bad` set to the bytes to replace by one U+FFFD: the bad
// byte alone when it cannot start a sequence, else the start that could still have been valid
// (the bytes before the one that broke it, or before the end of the text). This is what the
// decoder in nlohmann's dump accepts and rejects (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), and where it resumes after a rejection.
size_t utf8_sequence(std::string_view text, size_t at, size_t& bad) {
  const auto lead = static_cast<unsigned char>(text[at]);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong below U+0800
    if (lead == 0xED) high = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong below U+10000
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    bad = 1;  // a continuation byte, C0, C1 or F5..FF: never a lead byte
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    if (at + k >= text.size()) {
      bad = k;
      return 0;
    }
    const auto byte = static_cast<unsigned char>(text[at + k]);
    const bool in_range = k == 1 ? byte >= low && byte <= high : byte >= 0x80 && byte <= 0xBF;
    if (!in_range) {
      bad = k;  // the byte that broke it is read again as the start of what follows
      return 0;
    }
  }
  return length;
}

// The escape of an ASCII byte that a JSON string cannot hold as it is: a quote, a backslash
// or a control character.
void append_escaped_ascii(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.append(escape, sizeof escape);
    }
  }
}

bool plain_ascii(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// An integer in decimal, as nlohmann writes it: digits, a minus sign where negative.
template <typename Integer>
void append_decimal(std::string& out, Integer value) {
  char digits[24];  // 20 digits of 2^64 and a sign
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, static_cast<size_t>(result.ptr - digits));
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  size_t copied = 0;  // text before this is in `out`
  size_t at = 0;
  while (at < text.size()) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (plain_ascii(c)) {
      ++at;
      continue;
    }
    out.append(text.data() + copied, at - copied);
    if (c < 0x80) {
      append_escaped_ascii(out, c);
      ++at;
    } else {
      size_t bad = 0;
      const size_t length = utf8_sequence(text, at, bad);
      if (length > 0) {
        out.append(text.data() + at, length);
        at += length;
      } else {
        out += kReplacement;
        at += bad;
      }
    }
    copied = at;
  }
  out.append(text.data() + copied, text.size() - copied);
  out += '"';
}

bool replace_invalid_utf8(std::string& text) {
  std::string repaired;
  size_t copied = 0, at = 0;
  bool any = false;
  while (at < text.size()) {
    if (static_cast<unsigned char>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    size_t bad = 0;
    const size_t length = utf8_sequence(text, at, bad);
    if (length > 0) {
      at += length;
      continue;
    }
    repaired.append(text, copied, at - copied);
    repaired += kReplacement;
    at += bad;
    copied = at;
    any = true;
  }
  if (!any) return false;
  repaired.append(text, copied, std::string::npos);
  text = std::move(repaired);
  return true;
}

void append_json_integer(std::string& out, int64_t value) { append_decimal(out, value); }

void append_json_unsigned(std::string& out, uint64_t value) { append_decimal(out, value); }

void append_json_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char digits[64];  // the size of nlohmann's own number buffer
  const char* end = nlohmann::detail::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, static_cast<size_t>(end - digits));
}

}  // namespace tessera::sweep
