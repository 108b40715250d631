#pragma once
// The time bound (costmodel/lower_bound.hpp) priced as the simulator prices a run, so that a
// simulated makespan is never below it: blocks by the simulator's GPU model, and the byte
// bound over the links into the best-connected GPU (what the simulator's own receive bound
// divides a GPU's bytes by).
#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/costmodel/lower_bound.hpp"
#include "tessera/costmodel/time_floor.hpp"
#include "tessera/sim/gpu_profile.hpp"
#include "tessera/topologies/topology.hpp"

namespace tessera::sim {

costmodel::TimeLowerBound simulated_time_bound(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                    const GpuProfile& gpu);

// A floor under the makespan simulate() will give this schedule on `topology`, read off its ops
// before the check (as costmodel/time_floor.hpp does for the analytical model; a plan sets aside
// a candidate whose floor is above the best simulated time). Every op starts after the one before
// it on its stream, so the longest stream's compute and merges, priced as the simulator prices
// them, is one floor; the bytes a GPU's recvs bring over the links into the best-connected GPU of
// the topology are another (every byte a GPU receives crosses its own links in). Ranks sharing
// devices copy some bytes within a device: then only the first counts.
costmodel::TimeFloor simulated_time_floor(const Schedule& schedule, const BlockGrid& grid, const topo::Topology& topology,
                                          const GpuProfile& gpu, bool ranks_share_devices);

}  // namespace tessera::sim
