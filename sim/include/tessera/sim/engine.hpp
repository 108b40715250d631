#pragma once
// The simulation engine. Whatever is simulated (a schedule's ops, a standalone collective) is
// first expanded into tasks, then the engine runs them over a routed topology:
//  - a task moves `bytes` from one rank to another: one message, or one step of a collective's
//    algorithm (collective_expansion.hpp). It starts once the tasks it waits for have arrived
//    and, with a channel limit, once a sending channel at its source and a receiving one at its
//    destination are free; otherwise it queues (FIFO) at its source. Channels are held only
//    while data moves, never while a task waits, so the limit cannot deadlock;
//  - its data moves as a flow sharing link bandwidth max-min fairly (Fidelity::flow,
//    flow_network.hpp) or at its narrowest link's rate, unshared (Fidelity::alpha_beta); then
//    its latency passes (latency-last): its links' latencies and its path's per-message costs;
//  - a transfer (the tasks of one send/recv pair, or of one collective) arrives with its last
//    task, and the client that expanded it hears of it;
//  - compute is work of a known duration the client asks for; it ends at a known time.
// A transfer's tasks are either all added before it starts (add_task, add_dependency), or made
// as it runs by a TaskSource (a collective's ring, step by step): a ring of k members has
// O(k^2) tasks but only O(k) of them can run at once, and listing them all up front held
// ~100 bytes per task (134 MB of the 148 MB peak of a 1 GB all-reduce on ring-1024). A made
// task is started as soon as it is made, and its slot is reused once it has arrived.
// Deterministic: one time-ordered event queue; at one instant compute ends first, then data
// and arrival events in the order they were queued, then flows running dry (in the flow
// network's own order).
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/network_model.hpp"
#include "tessera/sim/flow_network.hpp"
#include "tessera/sim/min_queue.hpp"
#include "tessera/sim/path_table.hpp"
#include "tessera/sim/shared_devices.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

// Fidelity levels, same outputs:
//  - flow:       transfers are flows sharing link bandwidth max-min fairly, then the latency;
//  - alpha-beta: every transfer takes latency + bytes / narrowest link, no sharing.
enum class Fidelity { flow, alpha_beta };
Fidelity parse_fidelity(const std::string& text);  // UserError
std::string to_string(Fidelity fidelity);

struct SimulationCancelled : std::runtime_error {
  SimulationCancelled() : std::runtime_error("simulation cancelled") {}
};

struct EngineOptions {
  Fidelity fidelity = Fidelity::flow;
  // On top of the links' latencies: a task pays its path's latency, and the overhead when it
  // starts an operation (add_task's pays_overhead); a path within one GPU pays neither.
  MessageCosts message_costs = MessageCosts::none();
  int32_t channels = 0;  // > 0: transfers moving data into, and out of, each rank at once
  // Set from another thread to stop the run: run() then throws SimulationCancelled (looked at
  // every 4096 events).
  const std::atomic<bool>* cancel = nullptr;
  // Ranks sharing devices (shared_devices.hpp): when set, compute started with
  // start_compute_on() shares its rank's topology GPU with the other ranks placed there, and a
  // message between two ranks on one GPU is a device copy at the copy bandwidth (a flow over
  // that GPU's copy resource, so concurrent copies share it). Unset: every rank computes alone
  // and a path within one GPU takes no time (the engine as it was).
  const DeviceSharing* sharing = nullptr;
  // A schedule held by rotation: per resource, the one its flows cross instead (empty: none;
  // sim/src/rotation_resources.hpp).
  std::vector<int32_t> resource_representative;
};

// What runs on the engine hears of its progress here. Calls come from inside Engine::run()
// (and from start_transfer() for a transfer without tasks).
class EngineClient {
 public:
  // Every time before the engine takes its next event: the client starts what became ready.
  virtual void before_next_event() {}
  virtual void compute_done(uint32_t tag) { (void)tag; }
  virtual void transfer_arrived(int32_t transfer) = 0;

 protected:
  ~EngineClient() = default;
};

class Engine;

// Makes a transfer's tasks as it runs: each task is made when it can start, with
// Engine::start_task(). The engine owns the source and drops it when its transfer arrives.
class TaskSource {
 public:
  virtual ~TaskSource() = default;
  // How many tasks the transfer will have in all (its arrival waits for the last of them).
  virtual int64_t task_count() const = 0;
  // The transfer starts: start the tasks that wait for nothing, in order.
  virtual void start(Engine& engine, int32_t transfer) = 0;
  // The task started with `tag` arrived: start, in order, the tasks that no longer wait.
  virtual void arrived(Engine& engine, int32_t transfer, uint32_t tag) = 0;
};

class Engine {
 public:
  // `gpu_of_rank[rank]`: the topology GPU each rank runs on (tasks name ranks).
  Engine(const topo::Topology& topology, std::vector<int32_t> gpu_of_rank, const EngineOptions& options,
         EngineClient& client);

  // Expanding work into tasks: tasks go to the transfer begun last (std::logic_error
  // otherwise); start_transfer() then sets them going. A transfer's number, and its tasks'
  // slots, are reused once it has arrived (transfer_arrived): a run holds the transfers in
  // flight, not the millions it makes (a ring at 1,024 GPUs, 3 M).
  int32_t begin_transfer();
  // A transfer whose tasks `source` makes as it runs (none may be added with add_task).
  int32_t begin_transfer(std::unique_ptr<TaskSource> source);
  int32_t add_task(int32_t transfer, int32_t src_rank, int32_t dst_rank, double bytes, bool pays_overhead);
  // `after` waits for `before` to arrive; a task releases the tasks waiting for it in the order
  // their dependencies were added.
  void add_dependency(int32_t before, int32_t after);
  // Starts the transfer's tasks that wait for nothing, in the order they were added; a
  // transfer without tasks arrives at once.
  void start_transfer(int32_t transfer);
  // For a TaskSource, from its start() or arrived(): a task of its transfer that waits for
  // nothing more, started now; the source hears of its arrival with `tag`.
  void start_task(int32_t transfer, int32_t src_rank, int32_t dst_rank, double bytes, bool pays_overhead,
                  uint32_t tag);
  // Compute of `seconds` from now; compute_done(tag) when it ends.
  void start_compute(double seconds, uint32_t tag);
  // Compute of `seconds` (its time alone) by `rank`: with options.sharing, shared with the
  // compute of the other ranks on its GPU; otherwise start_compute().
  void start_compute_on(int32_t rank, double seconds, uint32_t tag);

  // Takes events in time order until none is left.
  void run();

  double now_s() const { return now_s_; }
  // Tasks added or started so far (made tasks counted once each, though their slots are reused).
  size_t task_count() const { return task_count_; }
  // Task slots ever allocated: what the tasks hold in memory at the peak (slots are reused).
  size_t task_slots() const { return tasks_.size(); }
  size_t event_count() const { return event_count_; }
  // Per rank: the bytes of the tasks that arrived there.
  const std::vector<double>& received_bytes() const { return received_bytes_; }
  // Per topology resource: bytes carried, and time with data on it.
  const std::vector<double>& carried_bytes() const;
  const std::vector<double>& busy_s() const;

 private:
  struct Task {
    int32_t transfer = 0;
    int32_t src_rank = 0;
    int32_t dst_rank = 0;
    uint32_t tag = 0;           // a made task's tag for its TaskSource
    double bytes = 0;
    double latency_s = 0;       // set when it starts
    int32_t waiting = 0;        // tasks it still waits for
    int32_t first_dependent = -1, last_dependent = -1;  // into dependents_
    int32_t next_in_transfer = -1;  // the transfer's next task, in the order they were added
    bool pays_overhead = true;
  };
  struct Dependent {
    int32_t task = 0;
    int32_t next = -1;  // the next dependent of the same task, -1 at the end
  };
  struct Transfer {
    int32_t first_task = -1, last_task = -1;  // its added tasks, a list through next_in_transfer
    int32_t tasks_left = 0;
    std::unique_ptr<TaskSource> source;  // set: its tasks are made as it runs
  };
  enum class EventKind : uint8_t { compute_done, data_moved, arrived };
  // An event's time and order are its place in the queue: at one instant compute ends first,
  // then the rest in the order they were queued (InstantQueue's classes 0 and 1).
  struct Event {
    uint32_t subject;  // compute: the client's tag; otherwise the task
    EventKind kind;
  };

  Task make_task(int32_t transfer, int32_t src_rank, int32_t dst_rank, double bytes, bool pays_overhead) const;
  int32_t store_task(const Task& task);  // into a free slot, or a new one
  int32_t store_transfer(Transfer transfer);
  void push_event(double time_s, EventKind kind, uint32_t subject);
  void count_event();
  bool has_channel(const Task& task) const;
  void request(int32_t task);
  void launch(int32_t task);
  void release_channels(int32_t task);
  void data_moved(int32_t task);
  void arrived(int32_t task);

  std::vector<int32_t> gpu_of_rank_;
  EngineOptions options_;
  EngineClient& client_;
  PathTable paths_;
  FlowNetwork network_;
  InstantQueue<Event, 2> events_;
  double now_s_ = 0;
  size_t event_count_ = 0;

  std::vector<Task> tasks_;
  std::vector<int32_t> free_tasks_;  // slots of tasks that arrived, for the next tasks
  size_t task_count_ = 0;
  std::vector<Dependent> dependents_;
  std::vector<Transfer> transfers_;
  std::vector<int32_t> free_transfers_;  // numbers of transfers that arrived
  int32_t last_begun_ = -1;              // the transfer add_task adds to
  std::vector<int32_t> task_of_flow_;
  std::vector<int32_t> sending_, receiving_;  // channels in use per rank
  std::vector<std::deque<int32_t>> queued_;   // per source rank, tasks waiting for a channel
  std::vector<double> received_bytes_;
  std::vector<double> alpha_beta_bytes_, alpha_beta_busy_s_;  // per resource
  // Ranks sharing devices (options.sharing): compute by processor sharing per GPU, and the
  // GPUs' copy resources, numbered from copy_resource_base_ after the topology's own.
  std::unique_ptr<SharedDevices> shared_;
  int32_t copy_resource_base_ = -1;
};

}  // namespace tessera::sim
