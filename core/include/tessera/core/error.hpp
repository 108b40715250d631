#pragma once
// Errors that reach the user. A UserError is bad input (a flag, a file, a schedule): the
// front ends print its message on one line and exit with code 2. Anything else is a bug.
#include <stdexcept>
#include <string>

namespace tessera {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tessera
