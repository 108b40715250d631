// The emulated NCCL (see fake/nccl.h).
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "nccl.h"

struct ncclComm {
  int rank = 0, count = 0, device = 0;
  int clique = 0;  // communicators made together by one ncclCommInitAll
};

namespace {

struct PendingSend {
  const void* data;
  size_t bytes;
  cudaStream_t stream;
};
struct PendingRecv {
  void* data;
  size_t bytes;
  cudaStream_t stream;
};
// Progress of one matched pair, shared by the tasks on both streams.
struct PairState {
  bool sender_reached = false, copied = false;
};

struct Nccl {
  int group_depth = 0;
  int cliques = 0;
  // Per (clique, sender, receiver), in issue order.
  std::map<std::tuple<int, int, int>, std::deque<PendingSend>> sends;
  std::map<std::tuple<int, int, int>, std::deque<PendingRecv>> recvs;
};
Nccl& nccl() {
  static Nccl instance;
  return instance;
}

// Pairs every send with its receive (same clique, same ends, in order) and queues the copies.
ncclResult_t match() {
  Nccl& n = nccl();
  for (auto& [ends, sends] : n.sends) {
    auto& recvs = n.recvs[ends];
    while (!sends.empty() && !recvs.empty()) {
      const PendingSend send = sends.front();
      const PendingRecv recv = recvs.front();
      sends.pop_front();
      recvs.pop_front();
      if (send.bytes != recv.bytes) return ncclInvalidArgument;
      auto state = std::make_shared<PairState>();
      tessera_emulation::enqueue_on(send.stream, [state] { state->sender_reached = true; }, {});
      tessera_emulation::enqueue_on(send.stream, [] {}, [state] { return state->copied; });
      tessera_emulation::enqueue_on(
          recv.stream,
          [state, send, recv] {
            std::memmove(recv.data, send.data, send.bytes);
            state->copied = true;
          },
          [state] { return state->sender_reached; });
    }
  }
  return ncclSuccess;
}

}  // namespace

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument (emulated NCCL: send and receive sizes differ)";
    case ncclInvalidUsage: return "invalid usage (emulated NCCL)";
    default: return "emulated NCCL error";
  }
}
ncclResult_t ncclGetUniqueId(ncclUniqueId*) { return ncclInvalidUsage; }
ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int) { return ncclInvalidUsage; }
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int count, const int* devices) {
  const int clique = nccl().cliques++;
  for (int rank = 0; rank < count; ++rank) {
    if (devices[rank] < 0 || devices[rank] >= tessera_emulation::kDevices) return ncclInvalidArgument;
    comms[rank] = new ncclComm{rank, count, devices[rank], clique};
  }
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t* state) {
  *state = ncclSuccess;
  return ncclSuccess;
}
ncclResult_t ncclGroupStart() {
  ++nccl().group_depth;
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
  if (nccl().group_depth == 0) return ncclInvalidUsage;
  if (--nccl().group_depth > 0) return ncclSuccess;
  return match();
}
ncclResult_t ncclSend(const void* data, size_t count, ncclDataType_t, int peer, ncclComm_t comm, cudaStream_t stream) {
  // A communicator works on its own GPU's streams only.
  if (peer < 0 || peer >= comm->count || tessera_emulation::device_of(stream) != comm->device) return ncclInvalidArgument;
  nccl().sends[{comm->clique, comm->rank, peer}].push_back({data, count, stream});
  return nccl().group_depth > 0 ? ncclSuccess : match();
}
ncclResult_t ncclRecv(void* data, size_t count, ncclDataType_t, int peer, ncclComm_t comm, cudaStream_t stream) {
  if (peer < 0 || peer >= comm->count || tessera_emulation::device_of(stream) != comm->device) return ncclInvalidArgument;
  nccl().recvs[{comm->clique, peer, comm->rank}].push_back({data, count, stream});
  return nccl().group_depth > 0 ? ncclSuccess : match();
}
