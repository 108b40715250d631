#pragma once
// MPI emulated by threads (emulated_mpi.cpp): tessera_emulation::run_mpi_processes starts one
// thread per process of a single MPI_COMM_WORLD on one machine; the calls the mpi transport
// makes (bcast, barrier, reduce of doubles, all-reduce of an int's maximum, split by machine)
// work across those threads.
#include <functional>

using MPI_Comm = int;
using MPI_Datatype = int;
using MPI_Op = int;
using MPI_Info = int;
constexpr MPI_Comm MPI_COMM_WORLD = 1, MPI_COMM_NULL = 0;
constexpr MPI_Datatype MPI_BYTE = 1, MPI_DOUBLE = 2, MPI_INT = 3;
constexpr MPI_Op MPI_SUM = 1, MPI_MAX = 2;
constexpr MPI_Info MPI_INFO_NULL = 0;
constexpr int MPI_SUCCESS = 0, MPI_COMM_TYPE_SHARED = 1, MPI_THREAD_FUNNELED = 1;

int MPI_Initialized(int* flag);
int MPI_Finalized(int* flag);
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MPI_Finalize();
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Comm_size(MPI_Comm comm, int* size);
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* node);
int MPI_Comm_free(MPI_Comm* comm);
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm comm);
int MPI_Reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int MPI_Abort(MPI_Comm comm, int code);

namespace tessera_emulation {
// Runs process(rank) for rank 0 .. count-1, each in its own thread as one MPI process.
void run_mpi_processes(int count, const std::function<void(int rank)>& process);
}  // namespace tessera_emulation
