#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera::cli {

void Table::print(std::ostream& out) const {
  std::vector<size_t> widths(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      bool numeric = !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-') && c > 0;
      std::string pad(widths[c] - cell.size(), ' ');
      text += (c ? "  " : "") + (numeric ? pad + cell : cell + pad);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(headers_);
  std::vector<std::string> rule;
  for (size_t width : widths) rule.push_back(std::string(width, '-'));
  line(rule);
  for (const auto& row : rows_) line(row);
}

std::string format_fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (std::abs(bytes) >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  return format_fixed(bytes, unit == 0 ? 0 : 1) + " " + units[unit];
}

std::string format_seconds(double seconds) {
  if (seconds >= 1) return format_fixed(seconds, 3) + " s";
  if (seconds >= 1e-3) return format_fixed(seconds * 1e3, 3) + " ms";
  return format_fixed(seconds * 1e6, 1) + " us";
}

}  // namespace tessera::cli
