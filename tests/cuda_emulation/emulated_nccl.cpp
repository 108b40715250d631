// The emulated NCCL (see fake/nccl.h). Posts are matched as they come; the streams wait.
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

// A posted send: its stream marks `reached` when it gets there, then waits until `copied`.
struct SendSlot {
  const void* data;
  size_t bytes;
  bool reached = false, copied = false;
};
// A posted receive: its stream waits until it is matched and the sender has reached its send,
// then copies. Both streams are blocked from the moment of posting, as NCCL's kernels block
// them, whether or not the peer has posted yet.
struct RecvSlot {
  void* data;
  size_t bytes;
  std::shared_ptr<SendSlot> from;
};

struct Nccl {
  int cliques = 0;
  // Unmatched posts per (clique, sender, receiver), in issue order.
  std::map<std::tuple<int, int, int>, std::deque<std::shared_ptr<SendSlot>>> sends;
  std::map<std::tuple<int, int, int>, std::deque<std::shared_ptr<RecvSlot>>> recvs;
};
Nccl& nccl() {
  static Nccl instance;
  return instance;
}
// Groups are per host thread, as in NCCL (each emulated MPI process is a thread).
thread_local int group_depth = 0;
using Lock = std::unique_lock<std::recursive_mutex>;

// Pairs the posts of one (clique, sender, receiver) in order.
ncclResult_t match(const std::tuple<int, int, int>& ends) {
  Nccl& n = nccl();
  auto& sends = n.sends[ends];
  auto& recvs = n.recvs[ends];
  while (!sends.empty() && !recvs.empty()) {
    std::shared_ptr<SendSlot> send = sends.front();
    std::shared_ptr<RecvSlot> recv = recvs.front();
    sends.pop_front();
    recvs.pop_front();
    if (send->bytes != recv->bytes) return ncclInvalidArgument;
    recv->from = send;
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
// The id names a new clique; every process that joins with it gets a communicator in it.
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  Lock lock(tessera_emulation::machine_lock());
  *id = {};
  const int clique = nccl().cliques++;
  std::memcpy(id->internal, &clique, sizeof clique);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int count, ncclUniqueId id, int rank) {
  Lock lock(tessera_emulation::machine_lock());
  int clique = 0;
  std::memcpy(&clique, id.internal, sizeof clique);
  int device = 0;
  cudaGetDevice(&device);
  *comm = new ncclComm{rank, count, device, clique};
  return ncclSuccess;
}
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int count, const int* devices) {
  Lock lock(tessera_emulation::machine_lock());
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
  Lock lock(tessera_emulation::machine_lock());
  ++group_depth;
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
  Lock lock(tessera_emulation::machine_lock());
  if (group_depth == 0) return ncclInvalidUsage;
  --group_depth;
  return ncclSuccess;
}
ncclResult_t ncclSend(const void* data, size_t count, ncclDataType_t, int peer, ncclComm_t comm, cudaStream_t stream) {
  Lock lock(tessera_emulation::machine_lock());
  // A communicator works on its own GPU's streams only.
  if (peer < 0 || peer >= comm->count || tessera_emulation::device_of(stream) != comm->device) return ncclInvalidArgument;
  auto slot = std::make_shared<SendSlot>(SendSlot{data, count});
  tessera_emulation::enqueue_on(stream, [slot] { slot->reached = true; }, {});
  tessera_emulation::enqueue_on(stream, [] {}, [slot] { return slot->copied; });
  const std::tuple<int, int, int> ends{comm->clique, comm->rank, peer};
  nccl().sends[ends].push_back(slot);
  return match(ends);
}
ncclResult_t ncclRecv(void* data, size_t count, ncclDataType_t, int peer, ncclComm_t comm, cudaStream_t stream) {
  Lock lock(tessera_emulation::machine_lock());
  if (peer < 0 || peer >= comm->count || tessera_emulation::device_of(stream) != comm->device) return ncclInvalidArgument;
  auto slot = std::make_shared<RecvSlot>(RecvSlot{data, count, nullptr});
  tessera_emulation::enqueue_on(
      stream,
      [slot] {
        std::memmove(slot->data, slot->from->data, slot->bytes);
        slot->from->copied = true;
      },
      [slot] { return slot->from != nullptr && slot->from->reached; });
  const std::tuple<int, int, int> ends{comm->clique, peer, comm->rank};
  nccl().recvs[ends].push_back(slot);
  return match(ends);
}
