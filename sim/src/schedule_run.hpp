#pragma once
// A checked schedule on the engine. Each op starts when its dependencies are done (its
// stream's previous op among them, and the free buffers of the analysis); then:
//  - compute and merge ops take the GPU model's time (op_compute_s);
//  - a send and its recv, once both are posted, become one transfer: one task, or with
//    chunk_bytes chunks that follow each other, each paying latency and overhead;
//  - a collective, once every member has reached it, becomes one transfer of its algorithm's
//    tasks (collective_expansion.hpp: the ring for all-gather and reduce-scatter, direct for
//    all-to-all and permutations).
// The ops of a transfer complete when it arrives. A GPU communicates while at least one of
// its transfers is in flight.
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tessera/schedules/checker.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/sim/simulator.hpp"

namespace tessera::sim {

class ScheduleRun final : public EngineClient {
 public:
  // Fills the op times and per-GPU compute and communication of `result` as it runs.
  // A schedule held by rotation needs `resource_representative` (rotation_resources.hpp).
  ScheduleRun(const schedules::CheckedSchedule& checked, const topo::Topology& topology,
              std::span<const int32_t> placement, const GpuProfile& gpu, const SimOptions& options,
              SimResult& result, std::vector<int32_t> resource_representative = {});
  void run();
  const Engine& engine() const { return engine_; }

 private:
  // The ops a transfer completes: a send and its recv, or a collective's member ops.
  struct TransferOps {
    uint32_t send = 0, recv = 0;
    int32_t collective = -1;
  };

  void before_next_event() override;
  void compute_done(uint32_t op) override { complete(op); }
  void transfer_arrived(int32_t transfer) override;

  void launch(uint32_t op);
  double compute_s(const Op& op);  // op_compute_s, the last one-block op's kept
  void start_messages(uint32_t send, uint32_t recv);
  void start_collective(size_t collective);
  // Records the ops and the communication start of the engine transfer just begun.
  int32_t begin_transfer(TransferOps ops, int32_t transfer);
  void complete(uint32_t op);
  template <typename Visit>
  void for_each_op(const TransferOps& ops, Visit visit) const;
  double bytes_of(std::span<const DataItem> items) const;

  const Schedule& schedule_;
  const BlockGrid& grid_;
  const schedules::ScheduleAnalysis& analysis_;
  const schedules::Successors successors_;  // the ops each op's completion may start
  const GpuProfile& gpu_;
  const SimOptions& options_;
  SimResult& result_;
  Engine engine_;

  std::vector<uint32_t> pending_;          // dependencies not yet done, per op
  std::vector<uint8_t> posted_;            // per op: launched
  std::vector<uint32_t> arrived_members_;  // per collective: members that reached it
  std::vector<uint32_t> ready_;            // ops to launch at this instant, in order
  std::vector<TransferOps> transfer_ops_;  // per engine transfer number in flight
  // A one-block compute op's time hangs on its pass, its chunks' tokens and its pairs alone; most
  // ops of a run are blocks of one shape (a zigzag ring's: half full), so the last is kept.
  struct OneBlock {
    Pass pass;
    int64_t query_tokens, key_tokens, pairs;
    friend bool operator==(const OneBlock&, const OneBlock&) = default;
  };
  std::optional<std::pair<OneBlock, double>> last_block_;
  // Communication time per GPU is the union of its transfers' lifetimes: transfers in flight,
  // and since when the count is above zero.
  std::vector<int32_t> in_flight_;
  std::vector<double> busy_since_s_;
};

}  // namespace tessera::sim
