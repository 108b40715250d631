#pragma once
// The time bound (costmodel/lower_bound.hpp) priced as the simulator prices a run, so that a
// simulated makespan is never below it: blocks by the simulator's GPU model, and the byte
// bound over the links into the best-connected GPU (what the simulator's own receive bound
// divides a GPU's bytes by).
#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/lower_bound.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

costmodel::TimeLowerBound simulated_time_bound(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                    const GpuProfile& gpu);

}  // namespace tessera::sim
