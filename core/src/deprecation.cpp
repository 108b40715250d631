#include "tessera/core/deprecation.hpp"

#include <iostream>
#include <mutex>
#include <set>

namespace tessera {

bool note_deprecated(const std::string& key, const std::string& text) { return note_deprecated(key, text, std::cerr); }

bool note_deprecated(const std::string& key, const std::string& text, std::ostream& out) {
  static std::mutex mutex;
  static std::set<std::string> noted;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!noted.insert(key).second) return false;
  out << "tessera: note: " << text << "\n" << std::flush;
  return true;
}

}  // namespace tessera
