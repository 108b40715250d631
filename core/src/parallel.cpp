#include "tessera/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera {

int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void parallel_for(size_t count, int threads, const std::function<void(size_t index)>& work) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (size_t index = next++; index < count && !failed.load(); index = next++) {
      try {
        work(index);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  const size_t pool_size = std::min(static_cast<size_t>(std::max(threads, 1)), std::max<size_t>(count, 1));
  {
    std::vector<std::jthread> pool;
    for (size_t thread = 1; thread < pool_size; ++thread) pool.emplace_back(worker);
    worker();
  }  // joins
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace tessera
