#include "mpi_communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace tessera::sweep {

namespace {
void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}
int to_int(size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) throw std::runtime_error("MPI: a message over 2 GB");
  return static_cast<int>(size);
}
}  // namespace

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

MpiCommunicator::MpiCommunicator() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

MpiCommunicator::~MpiCommunicator() { MPI_Finalize(); }

std::string MpiCommunicator::broadcast(const std::string& text) {
  unsigned long long size = text.size();
  check(MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = rank_ == 0 ? text : std::string(size, '\0');
  if (size > 0) check(MPI_Bcast(out.data(), to_int(size), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::vector<std::string> MpiCommunicator::gather(const std::string& text) {
  int size = to_int(text.size());
  std::vector<int> sizes(rank_ == 0 ? static_cast<size_t>(size_) : 0);
  check(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets(sizes.size(), 0);
  size_t total = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = to_int(total);
    total += static_cast<size_t>(sizes[r]);
  }
  std::string all(total, '\0');
  check(MPI_Gatherv(text.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> parts;
  for (size_t r = 0; r < sizes.size(); ++r)
    parts.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(sizes[r])));
  return parts;
}

int MpiCommunicator::default_jobs() const {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, threads / std::max(1, local_size_));
}

}  // namespace tessera::sweep
