#pragma once
// NCCL is not emulated: the emulation runs the executor's local transport (virtual ranks on one
// device). These declarations let transport.cpp compile; every call reports ncclInvalidUsage.
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

inline const char* ncclGetErrorString(ncclResult_t) { return "NCCL is not part of the CPU emulation"; }
inline ncclResult_t ncclGetUniqueId(ncclUniqueId*) { return ncclInvalidUsage; }
inline ncclResult_t ncclCommInitAll(ncclComm_t*, int, const int*) { return ncclInvalidUsage; }
inline ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int) { return ncclInvalidUsage; }
inline ncclResult_t ncclCommDestroy(ncclComm_t) { return ncclInvalidUsage; }
inline ncclResult_t ncclCommAbort(ncclComm_t) { return ncclInvalidUsage; }
inline ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t*) { return ncclInvalidUsage; }
inline ncclResult_t ncclGroupStart() { return ncclInvalidUsage; }
inline ncclResult_t ncclGroupEnd() { return ncclInvalidUsage; }
inline ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) { return ncclInvalidUsage; }
inline ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) { return ncclInvalidUsage; }
