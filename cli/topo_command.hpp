#pragma once
// `tessera topo list | show X | check FILE | dot X`.
#include <string>

namespace tessera::cli {

struct TopoFlags {
  std::string action;  // list, show, check, dot
  std::string target;  // preset or file
  std::string gpus;    // size for presets that take one
  bool json = false;
};

int run_topo(const TopoFlags& flags);

}  // namespace tessera::cli
