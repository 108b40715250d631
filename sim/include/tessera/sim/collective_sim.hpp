#pragma once
// Standalone collectives for calibration and cross-checks, expanded into the tasks of their
// algorithm (collective_expansion.hpp) and run on the engine over a topology (nccl-tests
// conventions for sizes and bus bandwidth):
//  - all-reduce, all-gather, reduce-scatter: the ring (ring order = rank order); all-reduce is
//    a reduce-scatter then an all-gather, 2(N-1) steps of S/N; all-reduce can also run as the
//    pipelined binary tree, the message cut into `tree_chunks` pieces;
//  - all-to-all: direct, every rank sends S/N to every other rank at once;
//  - send-recv: one flow of S bytes from rank 0 to rank 1.
// Links cost their bandwidth and latency only: no per-message costs.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/schedule.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

// The standalone collectives by their command-line names: all-reduce, all-gather,
// reduce-scatter, all-to-all, send-recv (UserError naming them otherwise).
CollectiveKind parse_collective(const std::string& text);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor (all-reduce 2 (N-1)/N; all-gather,
// reduce-scatter and all-to-all (N-1)/N; send-recv 1).
double bus_bandwidth_factor(CollectiveKind collective, int32_t ranks);

struct CollectiveResult {
  double makespan_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  size_t flows = 0;
  size_t events = 0;
};

enum class AllReduceShape { ring, tree };

// `bytes`: all-reduce the vector per rank; all-gather the gathered output; reduce-scatter the
// input; all-to-all the send buffer per rank; send-recv the message. `placement[rank]` is the
// topology GPU of each rank.
CollectiveResult simulate_collective(CollectiveKind collective, double bytes, const topo::Topology& topology,
                                     const std::vector<int32_t>& placement, Fidelity fidelity,
                                     AllReduceShape shape = AllReduceShape::ring, int32_t tree_chunks = 8);

}  // namespace tessera::sim
