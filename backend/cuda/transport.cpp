#include "transport.hpp"

#include <nccl.h>

#include <algorithm>
#include <atomic>

#include "cuda_check.hpp"
#include "tessera/backend/readiness.hpp"

#ifdef TESSERA_WITH_MPI
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#endif

namespace tessera::backend::cuda {

void DeviceTransport::send(const Endpoint&, int32_t, size_t, const std::string& what) {
  throw CudaError(what + ": this transport moves whole pairs only");
}
void DeviceTransport::recv(const Endpoint&, int32_t, size_t, const std::string& what) {
  throw CudaError(what + ": this transport moves whole pairs only");
}

namespace {

// An error NCCL found in the background (a peer gone, a network failure) surfaces here rather
// than as a hang.
void check_nccl_async(ncclComm_t comm, const std::string& what) {
  ncclResult_t state = ncclSuccess;
  check_nccl(ncclCommGetAsyncError(comm, &state), what);
  if (state != ncclSuccess && state != ncclInProgress) check_nccl(state, what);
}

class LocalTransport final : public DeviceTransport {
 public:
  // Every virtual rank lives on the GPU current at creation (GPU 0 unless the process chose
  // another, as an MPI process does); the event must belong to that GPU.
  LocalTransport() {
    check_cuda(cudaGetDevice(&device_), "reading the current GPU");
    check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating a transport event");
  }
  ~LocalTransport() override { cudaEventDestroy(ready_); }
  std::string name() const override { return "local (virtual ranks on GPU " + std::to_string(device_) + ", device copies)"; }
  int device_of(int32_t) const override { return device_; }
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
  int device_ = 0;
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
    if (aborted_) return;
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
  // May come from the watchdog's thread while this one is blocked in NCCL: the handles stay
  // (the blocked call still holds them) and the abort happens once.
  void abort() noexcept override {
    if (aborted_.exchange(true)) return;
    for (ncclComm_t comm : comms_)
      if (comm) ncclCommAbort(comm);
  }
  void check_async_errors(const std::string& what) override {
    for (ncclComm_t comm : comms_) check_nccl_async(comm, what);
  }

 private:
  std::vector<ncclComm_t> comms_;
  std::atomic<bool> aborted_{false};
};

#ifdef TESSERA_WITH_MPI
void check_mpi(int status, const std::string& what) {
  if (status != MPI_SUCCESS) throw CudaError("MPI error in " + what + " (code " + std::to_string(status) + ")");
}

class MpiNcclTransport final : public DeviceTransport {
 public:
  explicit MpiNcclTransport(int32_t ranks) {
    const MpiProcess process = join_mpi();
    rank_ = process.rank;
    size_ = process.size;
    try {
      device_ = process.node_rank;
      check_cuda(cudaSetDevice(device_), "selecting this process's GPU");
      ncclUniqueId id{};
      if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "creating the NCCL id");
      check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), "broadcasting the NCCL id");
      check_nccl(ncclCommInitRank(&comm_, ranks, id, rank_), "creating the NCCL communicator");
    } catch (const std::exception& error) {
      // The other processes may already wait in MPI or NCCL for this one: stop them all.
      fail_everywhere(error.what());
      throw;
    }
  }
  ~MpiNcclTransport() override {
    if (comm_ && !aborted_) ncclCommDestroy(comm_);
  }
  std::string name() const override { return "mpi (one process per GPU, NCCL point-to-point)"; }
  int device_of(int32_t) const override { return device_; }
  bool drives(int32_t rank) const override { return rank == rank_; }
  void begin_group() override { check_nccl(ncclGroupStart(), "starting an NCCL group"); }
  void copy(const Endpoint& from, const Endpoint& to, size_t bytes, const std::string& what) override {
    // Only a rank's own pairs reach here (a transfer to itself does not occur in schedules).
    send(from, to.rank, bytes, what);
    recv(to, from.rank, bytes, what);
  }
  void send(const Endpoint& from, int32_t to_rank, size_t bytes, const std::string& what) override {
    check_nccl(ncclSend(from.data, bytes, ncclChar, to_rank, comm_, from.stream), what);
  }
  void recv(const Endpoint& to, int32_t from_rank, size_t bytes, const std::string& what) override {
    check_nccl(ncclRecv(to.data, bytes, ncclChar, from_rank, comm_, to.stream), what);
  }
  void end_group(const std::string& what) override { check_nccl(ncclGroupEnd(), what); }
  void abort() noexcept override {
    if (comm_ && !aborted_.exchange(true)) ncclCommAbort(comm_);
  }
  void check_async_errors(const std::string& what) override {
    if (comm_ && !aborted_) check_nccl_async(comm_, what);
  }
  void fail_everywhere(const std::string& message) noexcept override {
    std::fprintf(stderr, "tessera (MPI process %d of %d): %s\nstopping every process of the job\n", rank_, size_,
                 message.c_str());
    std::fflush(stderr);
    abort();
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  void barrier() override { check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  void combine(std::vector<double>& values) override {
    std::vector<double> sum(values.size(), 0);
    // MPI counts are ints: large tensors go in slices.
    constexpr size_t kSlice = size_t{1} << 30;
    for (size_t first = 0; first < values.size(); first += kSlice) {
      const size_t count = std::min(kSlice, values.size() - first);
      check_mpi(MPI_Reduce(values.data() + first, sum.data() + first, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, 0,
                           MPI_COMM_WORLD),
                "gathering results on rank 0");
    }
    if (rank_ == 0) values = std::move(sum);
  }
  bool reporting() const override { return rank_ == 0; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  std::atomic<bool> aborted_{false};
};
#endif

}  // namespace

MpiProcess join_mpi() {
#ifdef TESSERA_WITH_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  MpiProcess process;
  MPI_Comm_rank(MPI_COMM_WORLD, &process.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &process.size);
  // Processes on one machine take its GPUs in turn: the rank among them picks the GPU.
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, process.rank, MPI_INFO_NULL, &node),
            "grouping the processes by machine");
  MPI_Comm_rank(node, &process.node_rank);
  MPI_Comm_size(node, &process.node_size);
  MPI_Comm_free(&node);
  return process;
#else
  throw BackendUnavailable("this build has no MPI (Open MPI was not found when it was configured)");
#endif
}

int refusing_process([[maybe_unused]] bool refuses) {
#ifdef TESSERA_WITH_MPI
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int mine = refuses ? rank : -1;
  int highest = -1;
  check_mpi(MPI_Allreduce(&mine, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "agreeing whether the run can go ahead");
  return highest;
#else
  throw BackendUnavailable("this build has no MPI (Open MPI was not found when it was configured)");
#endif
}

std::unique_ptr<DeviceTransport> make_mpi_transport([[maybe_unused]] int32_t ranks) {
#ifdef TESSERA_WITH_MPI
  return std::make_unique<MpiNcclTransport>(ranks);
#else
  throw BackendUnavailable("this build has no MPI (Open MPI was not found when it was configured)");
#endif
}

std::unique_ptr<DeviceTransport> make_local_transport() { return std::make_unique<LocalTransport>(); }
std::unique_ptr<DeviceTransport> make_nccl_transport(int32_t ranks) { return std::make_unique<NcclTransport>(ranks); }

}  // namespace tessera::backend::cuda
