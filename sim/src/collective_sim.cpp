#include "tessera/sim/collective_sim.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "tessera/core/error.hpp"
#include "tessera/sim/flow_network.hpp"
#include "tessera/topologies/routing.hpp"

namespace tessera::sim {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One point-to-point piece of the algorithm: rank src sends bytes to rank dst once the tasks
// it waits for are done.
struct Task {
  int32_t src = 0;
  int32_t dst = 0;
  double bytes = 0;
  std::vector<int32_t> waits_for;
};

// Pipelined binary tree all-reduce: rank i's parent is (i - 1) / 2. Chunk k goes up from i
// once i has chunk k from all its children (and sent chunk k - 1); the root's reduced chunk k
// comes down the same edges, each rank forwarding it after receiving it.
std::vector<Task> expand_tree(int32_t ranks, double bytes, int32_t chunks) {
  std::vector<Task> tasks;
  const double piece = bytes / chunks;
  auto up = [&](int32_t chunk, int32_t rank) { return chunk * (ranks - 1) + (rank - 1); };
  auto down = [&](int32_t chunk, int32_t rank) { return chunks * (ranks - 1) + chunk * (ranks - 1) + (rank - 1); };
  tasks.resize(static_cast<size_t>(2 * chunks * (ranks - 1)));
  for (int32_t chunk = 0; chunk < chunks; ++chunk) {
    for (int32_t rank = 1; rank < ranks; ++rank) {
      const int32_t parent = (rank - 1) / 2;
      Task& rise = tasks[static_cast<size_t>(up(chunk, rank))];
      rise = Task{rank, parent, piece, {}};
      for (int32_t child : {2 * rank + 1, 2 * rank + 2})
        if (child < ranks) rise.waits_for.push_back(up(chunk, child));
      if (chunk > 0) rise.waits_for.push_back(up(chunk - 1, rank));
      Task& fall = tasks[static_cast<size_t>(down(chunk, rank))];
      fall = Task{parent, rank, piece, {}};
      if (parent == 0) {
        for (int32_t child : {1, 2})
          if (child < ranks) fall.waits_for.push_back(up(chunk, child));  // the root has the sum
      } else {
        fall.waits_for.push_back(down(chunk, parent));
      }
      if (chunk > 0) fall.waits_for.push_back(down(chunk - 1, rank));
    }
  }
  return tasks;
}

std::vector<Task> expand(CollectiveAlgorithm collective, int32_t ranks, double bytes) {
  std::vector<Task> tasks;
  if (collective == CollectiveAlgorithm::send_recv) {
    if (ranks < 2) throw UserError("send-recv needs at least 2 ranks");
    tasks.push_back({0, 1, bytes, {}});
    return tasks;
  }
  if (ranks < 2) return tasks;
  if (collective == CollectiveAlgorithm::all_to_all) {
    for (int32_t src = 0; src < ranks; ++src)
      for (int32_t dst = 0; dst < ranks; ++dst)
        if (src != dst) tasks.push_back({src, dst, bytes / ranks, {}});
    return tasks;
  }
  const int32_t steps = collective == CollectiveAlgorithm::all_reduce ? 2 * (ranks - 1) : ranks - 1;
  const double piece = bytes / ranks;
  tasks.reserve(static_cast<size_t>(steps) * ranks);
  for (int32_t step = 0; step < steps; ++step) {
    for (int32_t rank = 0; rank < ranks; ++rank) {
      Task task{rank, (rank + 1) % ranks, piece, {}};
      if (step > 0) {
        task.waits_for.push_back((step - 1) * ranks + rank);                        // own previous send
        task.waits_for.push_back((step - 1) * ranks + (rank + ranks - 1) % ranks);  // data from predecessor
      }
      tasks.push_back(std::move(task));
    }
  }
  return tasks;
}
}  // namespace

CollectiveAlgorithm parse_collective(const std::string& text) {
  if (text == "all-reduce") return CollectiveAlgorithm::all_reduce;
  if (text == "all-gather") return CollectiveAlgorithm::all_gather;
  if (text == "reduce-scatter") return CollectiveAlgorithm::reduce_scatter;
  if (text == "all-to-all") return CollectiveAlgorithm::all_to_all;
  if (text == "send-recv") return CollectiveAlgorithm::send_recv;
  throw UserError("collective '" + text + "' is not one of all-reduce, all-gather, reduce-scatter, all-to-all, send-recv");
}

std::string to_string(CollectiveAlgorithm collective) {
  switch (collective) {
    case CollectiveAlgorithm::all_reduce: return "all-reduce";
    case CollectiveAlgorithm::all_gather: return "all-gather";
    case CollectiveAlgorithm::reduce_scatter: return "reduce-scatter";
    case CollectiveAlgorithm::all_to_all: return "all-to-all";
    case CollectiveAlgorithm::send_recv: return "send-recv";
  }
  return "?";
}

CollectiveResult simulate_collective(CollectiveAlgorithm collective, double bytes, const topo::Topology& topology,
                                     const std::vector<int32_t>& placement, Fidelity fidelity, AllReduceShape shape,
                                     int32_t tree_chunks) {
  const auto ranks = static_cast<int32_t>(placement.size());
  if (!(bytes > 0)) throw UserError("--size must be positive");
  if (tree_chunks < 1) throw UserError("tree chunks must be at least 1");
  if (shape == AllReduceShape::tree && collective != CollectiveAlgorithm::all_reduce)
    throw UserError("the tree algorithm is for all-reduce only");
  std::vector<Task> tasks = shape == AllReduceShape::tree && ranks > 1 ? expand_tree(ranks, bytes, tree_chunks)
                                                                       : expand(collective, ranks, bytes);
  // Dependents per task, and how many tasks each waits for.
  std::vector<int32_t> waiting(tasks.size());
  std::vector<std::vector<int32_t>> dependents(tasks.size());
  for (size_t index = 0; index < tasks.size(); ++index) {
    waiting[index] = static_cast<int32_t>(tasks[index].waits_for.size());
    for (int32_t before : tasks[index].waits_for) dependents[static_cast<size_t>(before)].push_back(static_cast<int32_t>(index));
  }
  topo::Router router(topology);
  FlowNetwork network(topology.resource_bytes_per_s);
  std::vector<int32_t> flow_task;
  std::vector<double> task_latency(tasks.size(), 0);
  struct Arrival {
    double time_s;
    uint64_t sequence;
    int32_t task;
    bool data_done;  // alpha-beta: the data phase ended; latency follows
    bool operator>(const Arrival& other) const {
      return time_s != other.time_s ? time_s > other.time_s : sequence > other.sequence;
    }
  };
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arrivals;
  uint64_t sequence = 0;
  double now_s = 0;
  std::vector<int32_t> resources;
  CollectiveResult result;

  auto launch = [&](int32_t index) {
    const Task& task = tasks[static_cast<size_t>(index)];
    resources.clear();
    double latency_s = 0, narrowest = kInfinity;
    for (int32_t edge : router.route(placement[static_cast<size_t>(task.src)], placement[static_cast<size_t>(task.dst)])) {
      const topo::LinkInfo& link = topology.graph[topology.edges[static_cast<size_t>(edge)]];
      resources.push_back(link.resource);
      latency_s += link.latency_s;
      narrowest = std::min(narrowest, topology.resource_bytes_per_s[static_cast<size_t>(link.resource)]);
    }
    task_latency[static_cast<size_t>(index)] = latency_s;
    ++result.flows;
    if (fidelity == Fidelity::flow) {
      int32_t flow = network.start(resources, task.bytes, now_s);
      if (static_cast<size_t>(flow) >= flow_task.size()) flow_task.resize(static_cast<size_t>(flow) + 1);
      flow_task[static_cast<size_t>(flow)] = index;
    } else {
      arrivals.push({now_s + (resources.empty() ? 0 : task.bytes / narrowest), sequence++, index, true});
    }
  };
  for (size_t index = 0; index < tasks.size(); ++index)
    if (waiting[index] == 0) launch(static_cast<int32_t>(index));
  while (true) {
    auto [flow_time, flow] = network.next_completion();
    double arrival_time = arrivals.empty() ? kInfinity : arrivals.top().time_s;
    if (flow_time == kInfinity && arrival_time == kInfinity) break;
    ++result.events;
    if (flow_time < arrival_time) {
      now_s = flow_time;
      network.finish(flow, now_s);
      int32_t task = flow_task[static_cast<size_t>(flow)];
      arrivals.push({now_s + task_latency[static_cast<size_t>(task)], sequence++, task, false});
      continue;
    }
    Arrival arrival = arrivals.top();
    arrivals.pop();
    now_s = arrival.time_s;
    if (arrival.data_done) {
      arrivals.push({now_s + task_latency[static_cast<size_t>(arrival.task)], sequence++, arrival.task, false});
      continue;
    }
    result.makespan_s = std::max(result.makespan_s, now_s);
    for (int32_t next : dependents[static_cast<size_t>(arrival.task)])
      if (--waiting[static_cast<size_t>(next)] == 0) launch(next);
  }
  if (result.makespan_s > 0) {
    result.algbw_bytes_per_s = bytes / result.makespan_s;
    double factor = 1.0;
    const double share = ranks > 1 ? static_cast<double>(ranks - 1) / ranks : 0.0;
    if (collective == CollectiveAlgorithm::all_reduce) factor = 2 * share;
    if (collective == CollectiveAlgorithm::all_gather || collective == CollectiveAlgorithm::reduce_scatter ||
        collective == CollectiveAlgorithm::all_to_all)
      factor = share;
    result.busbw_bytes_per_s = result.algbw_bytes_per_s * factor;
  }
  return result;
}

}  // namespace tessera::sim
