#pragma once
// A standalone collective (all-reduce, all-gather, ...) on a network, as `tessera simulate
// --collective` asks for it: parsed, placed and run on the simulator's engine.
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/scenario/network.hpp"
#include "tessera/sim/collective_sim.hpp"

namespace tessera::scenario {

struct CollectiveText {
  std::string collective;          // all-reduce, all-gather, reduce-scatter, all-to-all, send-recv
  std::string size = "1G";         // bytes, as core/units.hpp parses them (nccl-tests' convention for each collective)
  std::string algorithm = "ring";  // all-reduce: ring or tree
  std::string fidelity = "flow";
};

struct CollectiveEvaluation {
  CollectiveKind collective = CollectiveKind::all_reduce;
  double bytes = 0;
  int32_t ranks = 0;
  std::shared_ptr<const topo::Topology> topology;  // the uniform network's switch when none is given
  sim::CollectiveResult result;
};

// UserError naming the flag for bad text, a placement that needs a schedule ("auto"), or a
// topology with fewer GPUs than ranks.
CollectiveEvaluation evaluate_collective(const CollectiveText& text, int32_t ranks, const Network& network,
                                         const costmodel::Hardware& hardware);

}  // namespace tessera::scenario
