#pragma once
// The sweep's Communicator over MPI (Open MPI is the cluster engine): broadcast from rank 0 and
// gather to rank 0 of text. MpiSession initialises MPI only when the process was started by
// mpirun / mpiexec (its environment says so); otherwise the sweep runs as one process.
#include <memory>

#include "tessera/sweep/runner.hpp"

namespace tessera::sweep {

// True when an MPI launcher started this process (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK).
bool launched_by_mpi();

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();   // MPI_Init_thread (funneled: only the calling thread talks MPI)
  ~MpiCommunicator() override;  // MPI_Finalize
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string broadcast(const std::string& text) override;
  std::vector<std::string> gather(const std::string& text) override;
  int default_jobs() const override;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;  // ranks on this machine
};

}  // namespace tessera::sweep
