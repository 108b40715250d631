#include "tessera/scenario/collective.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/units.hpp"

namespace tessera::scenario {

CollectiveEvaluation evaluate_collective(const CollectiveText& text, int32_t ranks, const Network& network,
                                         const costmodel::Hardware& hardware) {
  CollectiveEvaluation evaluation;
  try {
    evaluation.collective = sim::parse_collective(text.collective);
  } catch (const UserError& error) {
    throw UserError(std::string("--collective: ") + error.what());
  }
  // A size in bytes by the one rule of core/units.hpp (1G = 1GiB = 2^30, 1GB = 1e9).
  int64_t size_bytes = 0;
  try {
    size_bytes = parse_byte_size(text.size);
  } catch (const UserError& error) {
    throw UserError(std::string("--size: ") + error.what());
  }
  if (size_bytes <= 0) throw UserError("--size: must be positive, got " + tessera::quoted(text.size));
  evaluation.bytes = static_cast<double>(size_bytes);
  evaluation.ranks = ranks;
  evaluation.topology = network.topology;
  if (!evaluation.topology)
    evaluation.topology = std::make_shared<const topo::Topology>(uniform_topology(ranks, hardware));
  if (evaluation.topology->gpu_count() < ranks)
    throw UserError("--gpus " + std::to_string(ranks) + " but the topology has " +
                    std::to_string(evaluation.topology->gpu_count()) + " GPUs");
  // A collective's ring runs in rank order; a named placement puts the ranks on GPUs. "auto"
  // searches over a schedule's traffic, which a standalone collective does not have.
  if (network.placement == "auto")
    throw UserError("--placement auto: a standalone collective has no schedule to place; name an order (e.g. linear)");
  const std::vector<int32_t> placement = topo::order_ranks(*evaluation.topology, ranks, network.placement);
  if (text.algorithm != "ring" && text.algorithm != "tree")
    throw UserError("--algorithm: '" + text.algorithm + "' is not one of ring, tree");
  const auto shape = text.algorithm == "tree" ? sim::AllReduceShape::tree : sim::AllReduceShape::ring;
  evaluation.result = sim::simulate_collective(evaluation.collective, evaluation.bytes, *evaluation.topology, placement,
                                               sim::parse_fidelity(text.fidelity), shape);
  return evaluation;
}

}  // namespace tessera::scenario
