#pragma once
// Standalone collectives for calibration and cross-checks, simulated as individual flows of
// their algorithm over a topology (nccl-tests conventions for sizes and bus bandwidth):
//  - all-reduce, all-gather, reduce-scatter: the ring algorithm (ring order = rank order);
//    all-reduce is a reduce-scatter then an all-gather, 2(N-1) steps of S/N;
//  - all-to-all: direct, every rank sends S/N to every other rank at once;
//  - send-recv: one flow of S bytes from rank 0 to rank 1.
// Step k of a rank waits for its own step k-1 and for the data of step k-1 from its ring
// predecessor, as in NCCL's ring. All-reduce can also run as a pipelined binary tree
// (reduce up, broadcast down, the message cut into `tree_chunks` pieces that follow each other
// through the tree), the shape of NCCL's tree algorithm with one tree instead of two.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sim/simulator.hpp"

namespace tessera::sim {

enum class CollectiveAlgorithm { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
CollectiveAlgorithm parse_collective(const std::string& text);  // UserError
std::string to_string(CollectiveAlgorithm collective);

struct CollectiveResult {
  double makespan_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  size_t flows = 0;
  size_t events = 0;
};

// `bytes`: all-reduce the vector per rank; all-gather the gathered output; reduce-scatter the
// input; all-to-all the send buffer per rank; send-recv the message.
enum class AllReduceShape { ring, tree };

CollectiveResult simulate_collective(CollectiveAlgorithm collective, double bytes, const topo::Topology& topology,
                                     const std::vector<int32_t>& placement, Fidelity fidelity,
                                     AllReduceShape shape = AllReduceShape::ring, int32_t tree_chunks = 8);

}  // namespace tessera::sim
