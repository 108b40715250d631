// MPI processes as threads (see fake/mpi.h). Collectives meet at a barrier of all processes,
// exchanging data through one shared buffer.
#include <algorithm>
#include <barrier>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi.h"

namespace {

struct World {
  explicit World(int processes) : count(processes), meet(processes) {}
  int count;
  std::barrier<> meet;
  std::mutex mutex;
  std::vector<unsigned char> bytes;
  std::vector<double> sums;
  int largest = 0;
};
World* world = nullptr;
thread_local int my_rank = -1;

}  // namespace

namespace tessera_emulation {
void run_mpi_processes(int count, const std::function<void(int rank)>& process) {
  World shared(count);
  world = &shared;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < count; ++rank)
    threads.emplace_back([&process, rank] {
      my_rank = rank;
      process(rank);
      my_rank = -1;
    });
  for (std::thread& thread : threads) thread.join();
  world = nullptr;
}
}  // namespace tessera_emulation

int MPI_Initialized(int* flag) {
  *flag = my_rank >= 0 ? 1 : 0;
  return MPI_SUCCESS;
}
int MPI_Finalized(int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_Init_thread(int*, char***, int, int* provided) {
  // Only processes started by run_mpi_processes exist.
  if (my_rank < 0) return 1;
  *provided = MPI_THREAD_FUNNELED;
  return MPI_SUCCESS;
}
int MPI_Finalize() { return MPI_SUCCESS; }
int MPI_Comm_rank(MPI_Comm, int* rank) {
  *rank = my_rank;
  return MPI_SUCCESS;
}
int MPI_Comm_size(MPI_Comm, int* size) {
  *size = world->count;
  return MPI_SUCCESS;
}
// One machine: the processes of a node are the whole world.
int MPI_Comm_split_type(MPI_Comm, int, int, MPI_Info, MPI_Comm* node) {
  *node = MPI_COMM_WORLD;
  return MPI_SUCCESS;
}
int MPI_Comm_free(MPI_Comm* comm) {
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
int MPI_Barrier(MPI_Comm) {
  world->meet.arrive_and_wait();
  return MPI_SUCCESS;
}
int MPI_Bcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm) {
  const size_t bytes = static_cast<size_t>(count) * (type == MPI_DOUBLE ? sizeof(double) : 1);
  world->meet.arrive_and_wait();
  if (my_rank == root) world->bytes.assign(static_cast<unsigned char*>(data), static_cast<unsigned char*>(data) + bytes);
  world->meet.arrive_and_wait();
  if (my_rank != root) std::memcpy(data, world->bytes.data(), bytes);
  world->meet.arrive_and_wait();
  return MPI_SUCCESS;
}
int MPI_Reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op, int root, MPI_Comm) {
  if (type != MPI_DOUBLE) return 1;
  world->meet.arrive_and_wait();
  if (my_rank == root) world->sums.assign(static_cast<size_t>(count), 0.0);
  world->meet.arrive_and_wait();
  {
    std::lock_guard lock(world->mutex);
    const auto* values = static_cast<const double*>(send);
    for (int i = 0; i < count; ++i) world->sums[static_cast<size_t>(i)] += values[i];
  }
  world->meet.arrive_and_wait();
  if (my_rank == root) std::memcpy(receive, world->sums.data(), static_cast<size_t>(count) * sizeof(double));
  world->meet.arrive_and_wait();
  return MPI_SUCCESS;
}
int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm) {
  if (type != MPI_INT || op != MPI_MAX || count != 1) return 1;  // all the executor needs
  world->meet.arrive_and_wait();
  if (my_rank == 0) world->largest = *static_cast<const int*>(send);
  world->meet.arrive_and_wait();
  {
    std::lock_guard lock(world->mutex);
    world->largest = std::max(world->largest, *static_cast<const int*>(send));
  }
  world->meet.arrive_and_wait();
  *static_cast<int*>(receive) = world->largest;
  world->meet.arrive_and_wait();
  return MPI_SUCCESS;
}
int MPI_Abort(MPI_Comm, int code) {
  throw std::runtime_error("MPI_Abort(" + std::to_string(code) + ") in emulated process " + std::to_string(my_rank));
}
