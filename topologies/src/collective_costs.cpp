#include "tessera/topologies/collective_costs.hpp"

#include <algorithm>

namespace tessera::topo {

namespace {
// Fraction of the data a rank moves: (p - 1) / p.
double share(int32_t ranks) { return ranks <= 1 ? 0.0 : static_cast<double>(ranks - 1) / ranks; }
}  // namespace

double bus_bandwidth_factor(CollectiveOp op, int32_t ranks) {
  return op == CollectiveOp::all_reduce ? 2.0 * share(ranks) : share(ranks);
}

double ring_collective_s(CollectiveOp op, int32_t ranks, double bytes, LinkParameters link) {
  if (ranks <= 1) return 0;
  const double steps = ranks - 1;
  const double beta = 1.0 / link.bytes_per_s;
  switch (op) {
    case CollectiveOp::all_reduce: return 2 * steps * link.latency_s + 2 * share(ranks) * bytes * beta;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all: return steps * link.latency_s + share(ranks) * bytes * beta;
  }
  return 0;
}

double torus_collective_s(CollectiveOp op, const std::vector<int32_t>& dims, double bytes, LinkParameters link) {
  const double beta = 1.0 / link.bytes_per_s;
  if (op == CollectiveOp::all_to_all) {
    int32_t widest = 1, diameter = 0;
    for (int32_t k : dims) {
      widest = std::max(widest, k);
      diameter += k / 2;
    }
    return diameter * link.latency_s + widest * bytes * beta / 8.0;
  }
  // Reduce-scatter down the dimensions: dimension i works on n / (k_1 ... k_{i-1}).
  double half = 0, remaining = bytes;
  for (int32_t k : dims) {
    half += (k - 1) * link.latency_s + share(k) * remaining * beta;
    remaining /= k;
  }
  return op == CollectiveOp::all_reduce ? 2 * half : half;
}

double hierarchical_collective_s(CollectiveOp op, int32_t gpus_per_node, int32_t nodes, int32_t nics_per_node,
                                 double bytes, LinkParameters nvlink, LinkParameters nic) {
  const double g = gpus_per_node, m = nics_per_node;
  // The g GPUs of a node share its m NICs: each GPU's inter-node stream gets m/g of a NIC.
  LinkParameters per_gpu_network{nic.latency_s, nic.bytes_per_s * std::min(1.0, m / g)};
  if (op == CollectiveOp::all_to_all) {
    // Each GPU sends n (N-1)/N off-node through its NIC share, and n/(gN) to each node-local peer.
    return ring_collective_s(op, gpus_per_node, bytes / nodes, nvlink) +
           (nodes - 1) * nic.latency_s + share(nodes) * bytes / per_gpu_network.bytes_per_s;
  }
  const double inside = ring_collective_s(CollectiveOp::reduce_scatter, gpus_per_node, bytes, nvlink);
  const double across = ring_collective_s(op, nodes, bytes / g, per_gpu_network);
  if (op == CollectiveOp::all_reduce) return 2 * inside + across;  // RS inside, AR across, AG inside
  return inside + across;  // all-gather: across then inside; reduce-scatter: inside then across
}

}  // namespace tessera::topo
