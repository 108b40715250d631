#pragma once
// How bytes move between ranks on the CUDA executor. Both transports see the same calls: a
// group of copies, each from a buffer on one rank's stream to a buffer on another's, that
// complete together (the schedule's rendezvous).
//  - local: all ranks are virtual ranks on one GPU; a copy is a device-to-device memcpy on the
//    receiver's stream after the sender's stream has reached the send.
//  - nccl: rank r is device r in this process; a copy is ncclSend/ncclRecv inside one group.
//  - mpi: one process per rank under mpirun (MPI bootstraps NCCL); each process drives only its
//    own rank and issues its half of every transfer (send or recv), matched by NCCL in order.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace tessera::backend::cuda {

struct Endpoint {
  int32_t rank = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
  void* data = nullptr;
};

class DeviceTransport {
 public:
  virtual ~DeviceTransport() = default;
  virtual std::string name() const = 0;
  virtual int device_of(int32_t rank) const = 0;
  virtual void begin_group() = 0;
  // `what` names the op for error messages.
  virtual void copy(const Endpoint& from, const Endpoint& to, size_t bytes, const std::string& what) = 0;
  virtual void end_group(const std::string& what) = 0;
  // Aborts in-flight communication (the watchdog's last resort, possibly from its own thread);
  // never throws.
  virtual void abort() noexcept {}
  // Throws, naming `what`, if communication failed in the background.
  virtual void check_async_errors(const std::string&) {}
  // Called when this process's part of a run failed with `message`. Under MPI the other
  // processes would otherwise wait on their NCCL peers until their watchdogs fire, so the
  // message is printed here and the whole job is stopped; elsewhere the caller reports it.
  virtual void fail_everywhere(const std::string&) noexcept {}

  // Whether this process drives `rank` (every rank, except under MPI: its own).
  virtual bool drives(int32_t) const { return true; }
  // One-sided halves of a transfer whose other side another process drives.
  virtual void send(const Endpoint& from, int32_t to_rank, size_t bytes, const std::string& what);
  virtual void recv(const Endpoint& to, int32_t from_rank, size_t bytes, const std::string& what);
  // Across processes: wait for all; sum `values` elementwise into the reporting process.
  virtual void barrier() {}
  virtual void combine(std::vector<double>&) {}
  virtual bool reporting() const { return true; }
};

// This process under mpirun: its rank among all processes, and among those on its machine
// (which picks its GPU: rank r on a machine uses visible device r).
struct MpiProcess {
  int rank = 0, size = 1;
  int node_rank = 0, node_size = 1;
};
// Initialises MPI if nobody has (finalised at exit) and says who this process is. Throws
// BackendUnavailable without MPI in the build.
MpiProcess join_mpi();
// A collective: every process says whether it refuses a run; returns the highest rank of a
// process that refuses, or -1 when none does.
int refusing_process(bool refuses);

std::unique_ptr<DeviceTransport> make_local_transport();
// Needs `ranks` visible devices; initialises one communicator per device (ncclCommInitAll).
std::unique_ptr<DeviceTransport> make_nccl_transport(int32_t ranks);
// Needs MPI with one process per rank and a GPU for each process of a machine (what
// cuda_readiness checks); the process uses the GPU of its node rank. Throws BackendUnavailable
// without MPI in the build.
std::unique_ptr<DeviceTransport> make_mpi_transport(int32_t ranks);

}  // namespace tessera::backend::cuda
