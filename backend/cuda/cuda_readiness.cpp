#include "cuda_readiness.hpp"

#include <cstdio>
#include <map>
#include <string>

#include "attention_kernels.hpp"
#include "cuda_check.hpp"
#include "tessera/backend/device_buffers.hpp"
#include "tessera/backend/tensors.hpp"
#include "tessera/core/error.hpp"
#include "transport.hpp"

namespace tessera::backend::cuda {

namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

// What does not depend on the machine: the same answer in every process.
Readiness kernel_limits(const Schedule& schedule) {
  if (schedule.problem.head_dim > kMaxHeadDim || schedule.problem.head_dim_v > kMaxHeadDim)
    return Readiness::unsupported("--head-dim: the CUDA kernels support head dimensions up to " + std::to_string(kMaxHeadDim));
  // Device buffers are found by keys of 20 bits of rank and chunk and 16 of head group.
  if (schedule.gpus >= (1 << 20) || schedule.chunks() >= (1 << 20) || schedule.head_groups >= (1 << 16))
    return Readiness::unsupported("the CUDA executor runs at most 2^20 ranks and chunks and 2^16 head groups");
  if (schedule.problem.batch != 1)
    return Readiness::unsupported("the schedule's problem has batch " + std::to_string(schedule.problem.batch) +
                                  "; the executors run one sequence (batch 1)");
  // The host tensors come first (tensors.hpp); the device buffers are checked by memory_fits.
  try {
    require_host_tensor_memory(schedule.problem);
  } catch (const UserError& refusal) {
    return Readiness::unsupported(refusal.what());
  }
  return Readiness::ready();
}

// The ranks this process drives, by the GPU each runs on: as the transport will place them.
std::map<int, std::vector<int32_t>> driven_ranks_by_device(Transport transport, int32_t ranks, const MpiProcess& process) {
  std::map<int, std::vector<int32_t>> ranks_on;
  switch (transport) {
    case Transport::local: {
      int device = 0;
      check_cuda(cudaGetDevice(&device), "reading the current GPU");  // virtual ranks live on it
      for (int32_t rank = 0; rank < ranks; ++rank) ranks_on[device].push_back(rank);
      break;
    }
    case Transport::nccl:
      for (int32_t rank = 0; rank < ranks; ++rank) ranks_on[rank].push_back(rank);
      break;
    case Transport::mpi: ranks_on[process.node_rank].push_back(process.rank); break;
  }
  return ranks_on;
}

// The memory plan's bytes against the free memory of every GPU this process uses.
Readiness memory_fits(const schedules::CheckedSchedule& checked, const std::map<int, std::vector<int32_t>>& ranks_on) {
  const Schedule& schedule = checked.schedule();
  const DeviceMemoryPlan plan = plan_device_memory(schedule, checked.grid());
  const CurrentDeviceScope keep_device;
  for (const auto& [device, ranks] : ranks_on) {
    int64_t bytes = 0;
    for (int32_t rank : ranks) bytes += plan.rank_bytes[static_cast<size_t>(rank)];
    check_cuda(cudaSetDevice(device), "selecting GPU " + std::to_string(device));
    size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free GPU memory");
    // Token positions (8 bytes a token) and document bounds come on top of the buffers.
    const int64_t with_positions = bytes + schedule.problem.seq_len * 12;
    if (static_cast<double>(with_positions) > 0.95 * static_cast<double>(free_bytes))
      return Readiness::unsupported("the schedule does not fit on GPU " + std::to_string(device) + ": it needs up to " +
                                    gigabytes(static_cast<double>(with_positions)) + " (" + std::to_string(ranks.size()) +
                                    " rank(s)) and " + gigabytes(static_cast<double>(free_bytes)) + " of " +
                                    gigabytes(static_cast<double>(total_bytes)) + " is free");
  }
  return Readiness::ready();
}

// The machine-dependent part, which may differ between MPI processes.
Readiness this_process_ready(const schedules::CheckedSchedule& checked, Transport transport, int visible_devices,
                             const MpiProcess& process) {
  const int32_t ranks = checked.schedule().gpus;
  if (transport == Transport::mpi && process.node_size > visible_devices)
    return Readiness::unavailable(std::to_string(process.node_size) + " MPI processes share a machine with " +
                                  std::to_string(visible_devices) + " GPU(s); NCCL needs one GPU per process");
  try {
    return memory_fits(checked, driven_ranks_by_device(transport, ranks, process));
  } catch (const CudaError& error) {  // an answer all the same: MPI peers wait for it
    return Readiness::unavailable(error.what());
  }
}

}  // namespace

Readiness cuda_readiness(const schedules::CheckedSchedule& checked, const ExecutorOptions& options, int visible_devices) {
  const Schedule& schedule = checked.schedule();
  require_full_program(schedule, "the CUDA executor");
  if (visible_devices == 0) return Readiness::unavailable("no CUDA GPU was found on this machine (cudaGetDeviceCount reports none)");
  if (Readiness limits = kernel_limits(schedule); !limits.ok()) return limits;
  if (options.transport == Transport::nccl && schedule.gpus > visible_devices)
    return Readiness::unavailable("the nccl transport runs one rank per GPU: the schedule has " + std::to_string(schedule.gpus) +
                                  " ranks but " + std::to_string(visible_devices) + " GPUs are visible (use --transport local)");
  if (options.transport != Transport::mpi) return this_process_ready(checked, options.transport, visible_devices, {});

  MpiProcess process;
  try {
    process = join_mpi();
  } catch (const BackendUnavailable& error) {  // a build without MPI: the same in every process
    return Readiness::unavailable(error.what());
  }
  if (process.size != schedule.gpus)
    return Readiness::unavailable("the mpi transport runs one process per rank: the schedule has " + std::to_string(schedule.gpus) +
                                  " ranks but mpirun started " + std::to_string(process.size) + " processes");
  // From here the answer may differ between processes: they agree, so that none goes on to
  // set up NCCL and wait for a peer that refused.
  Readiness mine = this_process_ready(checked, options.transport, visible_devices, process);
  const int refusing = refusing_process(!mine.ok());
  if (mine.ok() && refusing >= 0)
    return Readiness::unavailable("MPI process " + std::to_string(refusing) + " cannot run the schedule (it says why)");
  return mine;
}

}  // namespace tessera::backend::cuda
