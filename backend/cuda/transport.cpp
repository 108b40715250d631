#include "transport.hpp"

#include <nccl.h>

#include "cuda_check.hpp"

namespace tessera::backend::cuda {

namespace {

class LocalTransport final : public DeviceTransport {
 public:
  LocalTransport() { check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating a transport event"); }
  ~LocalTransport() override { cudaEventDestroy(ready_); }
  std::string name() const override { return "local (virtual ranks on one GPU, device copies)"; }
  int device_of(int32_t) const override { return 0; }
  void begin_group() override {}
  void copy(const Endpoint& from, const Endpoint& to, size_t bytes, const std::string& what) override {
    // The receiver's stream may only read once the sender's stream has produced the data.
    if (from.stream != to.stream) {
      check_cuda(cudaEventRecord(ready_, from.stream), what);
      check_cuda(cudaStreamWaitEvent(to.stream, ready_, 0), what);
    }
    check_cuda(cudaMemcpyAsync(to.data, from.data, bytes, cudaMemcpyDeviceToDevice, to.stream), what);
  }
  void end_group(const std::string&) override {}

 private:
  cudaEvent_t ready_ = nullptr;
};

class NcclTransport final : public DeviceTransport {
 public:
  explicit NcclTransport(int32_t ranks) : comms_(static_cast<size_t>(ranks)) {
    std::vector<int> devices(static_cast<size_t>(ranks));
    for (int32_t rank = 0; rank < ranks; ++rank) devices[static_cast<size_t>(rank)] = rank;
    check_nccl(ncclCommInitAll(comms_.data(), ranks, devices.data()), "creating NCCL communicators");
  }
  ~NcclTransport() override {
    for (ncclComm_t comm : comms_)
      if (comm) ncclCommDestroy(comm);
  }
  std::string name() const override { return "nccl (one rank per GPU, point-to-point)"; }
  int device_of(int32_t rank) const override { return rank; }
  void begin_group() override { check_nccl(ncclGroupStart(), "starting an NCCL group"); }
  void copy(const Endpoint& from, const Endpoint& to, size_t bytes, const std::string& what) override {
    check_nccl(ncclSend(from.data, bytes, ncclChar, to.rank, comms_[static_cast<size_t>(from.rank)], from.stream), what);
    check_nccl(ncclRecv(to.data, bytes, ncclChar, from.rank, comms_[static_cast<size_t>(to.rank)], to.stream), what);
  }
  void end_group(const std::string& what) override { check_nccl(ncclGroupEnd(), what); }
  void abort() noexcept override {
    for (ncclComm_t& comm : comms_)
      if (comm) {
        ncclCommAbort(comm);
        comm = nullptr;
      }
  }

 private:
  std::vector<ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<DeviceTransport> make_local_transport() { return std::make_unique<LocalTransport>(); }
std::unique_ptr<DeviceTransport> make_nccl_transport(int32_t ranks) { return std::make_unique<NcclTransport>(ranks); }

}  // namespace tessera::backend::cuda
