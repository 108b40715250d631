#pragma once
// NCCL point-to-point emulated on the emulated GPUs (emulated_nccl.cpp): communicators from
// ncclCommInitAll, sends and receives matched in order per (sender, receiver) when their group
// ends, each pair a copy that the receiver's stream makes once the sender's stream has reached
// the send, the sender's stream continuing only when the copy is done. The multi-process path
// (ncclGetUniqueId, ncclCommInitRank) is not emulated.
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
