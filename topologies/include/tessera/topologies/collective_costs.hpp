#pragma once
// Closed-form collective times (research/simulators.md 3): Hockney alpha-beta, n bytes as in
// nccl-tests (all-reduce: the vector per rank; all-gather: the gathered output; reduce-scatter:
// the input; all-to-all: the send buffer per rank). Reduction arithmetic is not counted.
#include <cstdint>
#include <vector>

namespace tessera::topo {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, all_to_all };

struct LinkParameters {
  double latency_s = 0;
  double bytes_per_s = 0;
};

// A unidirectional ring of p ranks (all-to-all as pairwise exchange).
double ring_collective_s(CollectiveOp op, int32_t ranks, double bytes, LinkParameters link);
// Dimension-ordered rings over a k1 x ... x kd torus (one direction per dimension): the
// per-dimension terms of 3.4; all-to-all uses the bisection bound k_max * n / (8 B) of a
// bidirectional torus with even sizes, plus one latency per hop of the diameter.
double torus_collective_s(CollectiveOp op, const std::vector<int32_t>& dims, double bytes, LinkParameters link);
// Two levels (3.5): g GPUs per node on NVLink, N nodes, m NICs per node: reduce-scatter inside
// the node, the collective across nodes on n/g per GPU sharing the m NICs, all-gather inside.
double hierarchical_collective_s(CollectiveOp op, int32_t gpus_per_node, int32_t nodes, int32_t nics_per_node,
                                 double bytes, LinkParameters nvlink, LinkParameters nic);

// nccl-tests conventions: algbw = n / t; busbw = algbw * factor.
double bus_bandwidth_factor(CollectiveOp op, int32_t ranks);

}  // namespace tessera::topo
