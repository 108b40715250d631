#pragma once
// NCCL point-to-point emulated on the emulated GPUs (emulated_nccl.cpp): communicators from
// ncclCommInitAll or, for emulated MPI processes, ncclGetUniqueId + ncclCommInitRank. A posted
// send or receive blocks its stream at once (as NCCL's kernels do); sends and receives are
// matched in order per (sender, receiver), and the receiver's stream copies once the sender's
// stream has reached the send, which then waits for the copy to finish.
#include <cstddef>

#include "cuda_runtime_api.h"

using ncclComm_t = struct ncclComm*;
enum ncclResult_t {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};
enum ncclDataType_t { ncclChar = 0 };
struct ncclUniqueId {
  char internal[128];
};

const char* ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclGetUniqueId(ncclUniqueId* id);
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int count, const int* devices);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int count, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
ncclResult_t ncclSend(const void* data, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void* data, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream);
