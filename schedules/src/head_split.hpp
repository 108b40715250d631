#pragma once
// Head-split (Ulysses-style) applicability, shared by ulysses and usp: u head groups need u to
// divide the query heads, and the key/value heads to split evenly (u divides G) or to be
// replicated evenly (G divides u).
#include <string>

#include "tessera/core/problem.hpp"

namespace tessera::schedules {

// Empty when u head groups work for the problem, else why not.
std::string head_split_problem(const Problem& problem, int64_t u);

}  // namespace tessera::schedules
