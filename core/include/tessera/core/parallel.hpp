#pragma once
// Independent work items on all cores: the one thread pool of the command line's plan, the
// GUI's comparison and sweeps.
#include <cstddef>
#include <functional>

namespace tessera {

// The threads to use by default: the machine's hardware threads (at least 1).
int default_threads();

// Runs work(index) once for every index in [0, count) on up to `threads` threads, the caller's
// among them; items are handed out in index order. When an item throws, no further items are
// started, the running ones finish, and the first exception is rethrown here: a worker's error
// never terminates the process.
void parallel_for(size_t count, int threads, const std::function<void(size_t index)>& work);

}  // namespace tessera
