#pragma once
// The simulator's one priority-queue type: the smallest entry (by the entry's operator>) on
// top. The engine's event queue, the flow network's predicted completions and its fair-share
// heap are all this type, so that every ordering rule of the simulation is read in one place:
// entries that compare equal leave in an order fixed by the sequence of pushes and pops, which
// is why the engine gives its events a sequence number.
#include <functional>
#include <queue>
#include <vector>

namespace tessera::sim {

template <typename Entry>
using MinQueue = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;

}  // namespace tessera::sim
