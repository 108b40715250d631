#pragma once
// A plain-text table for people: columns aligned, numbers right-aligned.
#include <ostream>
#include <string>
#include <vector>

namespace tessera::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

std::string format_bytes(double bytes);            // "535.0 MB" (SI)
std::string format_seconds(double seconds);        // "12.3 ms"
std::string format_fixed(double value, int digits);

}  // namespace tessera::cli
