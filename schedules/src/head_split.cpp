#include "head_split.hpp"

namespace tessera::schedules {

std::string head_split_problem(const Problem& problem, int64_t u) {
  if (problem.heads % u != 0)
    return "splitting heads " + std::to_string(u) + " ways needs " + std::to_string(u) + " to divide the " +
           std::to_string(problem.heads) + " query heads";
  if (problem.kv_heads % u != 0 && u % problem.kv_heads != 0)
    return "splitting heads " + std::to_string(u) + " ways needs " + std::to_string(u) + " to divide the " +
           std::to_string(problem.kv_heads) + " key/value heads, or to be a multiple of them (replication)";
  return "";
}

}  // namespace tessera::schedules
