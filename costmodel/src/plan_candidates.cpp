#include "tessera/costmodel/generators.hpp"

namespace tessera {

std::vector<Candidate> plan_candidates(const Problem& problem, int32_t gpus, std::optional<Layout> layout) {
  (void)problem;
  std::vector<Candidate> candidates;
  GeneratorOptions base;
  base.gpus = gpus;
  base.layout = layout;
  candidates.push_back({"ring", base});
  return candidates;
}

}  // namespace tessera
