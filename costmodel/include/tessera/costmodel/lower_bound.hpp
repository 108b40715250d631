#pragma once
// Lower bounds that hold for every schedule the model can express, head splitting included:
// the bytes the busiest GPU must receive (held against CostReport::recv_bytes_max) and the time
// no schedule can beat. Pure functions, no I/O.
//
// The byte bound (research/peers.md 5.2, carried over from (query, key) pairs to heads).
//
// Work is counted in triples (lane, query, key). A lane is one query head of one sequence of
// the batch: B*H lanes, and each KV lane (B*G of them) serves k = H/G of them. A triple is an
// unmasked pair of one lane. Every schedule evaluates each of the T = B*H*total_pairs triples
// exactly once per pass (the checker's rule); splitting heads, tokens or blocks only changes
// which GPU evaluates which triple.
//
// What one GPU must move. Let a GPU evaluate the triples S; for lane h let I_h be the queries
// it touches, for KV lane g the keys J_g. It owns its chunk (m tokens) of every lane for free.
// For each of the a_h = |I_h \ own| other queries it must receive the query-side inputs
// (forward Q; backward Q, dO, LSE and delta) and send away a partial output (forward O and LSE;
// backward dQ), because no partial may stay off its owner; for each of the b_g = |J_g \ own|
// other keys it must receive K and V, and in the backward pass send away dK and dV. A
// Loomis-Whitney count, refined by ownership: S_h lies in (own x own), (I_h \ own) x J_g and
// own x (J_g \ own), so
//     |S_h| <= D + a_h (m + b_g) + m b_g,
// D being the unmasked pairs of the GPU's own diagonal block (mask exact, from the grid).
// Summed over the lanes of each KV lane, with A_g = sum of its a_h <= k (N - m), b_g <= N - m:
//     |S| <= B*H*D + sum over g of [ m A_g + k m b_g + A_g b_g ].
// For given totals SA = sum A_g and SB = sum b_g, the sum of A_g b_g is largest when A and b
// fill the KV lanes in the same order, each lane to its cap (rearrangement: for b sorted,
// filling A greedily maximises what is linear in A; then the same for b). That leaves two
// variables:   least  x SA + y SB   such that   m SA + k m SB + F(SA, SB) >= |S| - B*H*D,
// x and y being the bytes per token of one lane on each side, F the greedy sum: linear off the
// diagonal cells of the (SA / cap, SB / cap) grid and bilinear on them. It is solved exactly
// (least_bytes in lower_bound.cpp); the least cost never decreases as |S| grows.
//
// From one GPU to recv_bytes_max. Two arguments; the bound is the larger:
//  1. Inputs of the GPU that evaluates the most triples. It evaluates t >= T/P of them (someone
//     does at least the average), and every input it uses it must have received, so
//     recv_bytes_max >= its received bytes >= least inputs(t) >= least inputs(T/P), because the
//     least cost is nondecreasing in t. No Jensen step is taken: the least cost is concave-like
//     in t (a GPU doing more triples pays less per triple), and the average of a concave
//     function is not bounded below by its value at the average.
//  2. All traffic, over the GPUs. Every byte one GPU sends another receives, so recv_bytes_max
//     >= (inputs received + partials sent, summed over GPUs) / P. That sum is the same relaxed
//     problem over the P*B*G (GPU, KV lane) pairs together, which share T triples, so the same
//     solver gives its least value, again without assuming how evenly the work is spread.
// Input and output kinds are different data, so no byte is counted twice. With both passes a
// GPU may keep the Q and K, V it received for the forward pass until the backward pass, so
// argument 1 takes the backward pass's inputs, and argument 2 the larger of
// (forward in and out + backward without Q, K, V) and (forward outputs + backward in and out).
// Relaxations, each of which only lowers the bound: transfers move whole chunks of whole head
// groups (the bound counts rows of lanes); every GPU is credited with the largest chunk and
// the largest diagonal block; the pairs between its own and other tokens are not capped by the
// mask. A weaker bound that holds beats a tighter one that does not.
//
// The time bound: no schedule finishes before the busiest GPU has done its compute, nor before
// the busiest receiver has received the byte bound. Both are priced the way the model compared
// against prices them (the alpha-beta model of cost.hpp, or the simulator's GPU profile and
// links), so time / bound is never below 1:
//  - compute: every block with work once per pass, all heads in one kernel (splitting heads only
//    adds launches), spread evenly over the GPUs, and over the streams a GPU computes on (the
//    models run different streams at once);
//  - communication: the byte bound over the bandwidth into the GPU that received the most. In
//    the simulator that is at most the links into the best-connected GPU (what SimResult's
//    receive_bound_s divides by); in the alpha-beta model, which lets every stream receive at
//    link speed at once, the rate its own transfers got times the streams it receives on.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>

#include "tessera/core/block_grid.hpp"
#include "tessera/core/schedule.hpp"

namespace tessera::costmodel {

// Per-GPU bytes received, at least, by the GPU that receives the most.
struct LowerBound {
  double forward_bytes = 0;   // the forward pass alone (0 without one)
  double backward_bytes = 0;  // the backward pass alone (0 without one)
  double received_bytes = 0;  // the problem's pass or passes: what recv_bytes_max is held against
  // The two arguments behind received_bytes, which is the larger of them:
  double busiest_inputs_bytes = 0;  // 1: inputs of the GPU with the most triples
  double mean_traffic_bytes = 0;    // 2: inputs received and partials sent, per GPU on average
  double total_bytes() const { return received_bytes; }
};

// Remembered per problem, GPU count and grid for every thread (a sweep or a plan asks for one
// problem once per schedule it prices); _unremembered computes it every time.
LowerBound communication_lower_bound(const Problem& problem, int32_t gpus, const BlockGrid& grid);
LowerBound communication_lower_bound_unremembered(const Problem& problem, int32_t gpus, const BlockGrid& grid);

// Seconds one compute op takes in the model compared against (cost.cpp's alpha-beta pricing,
// or sim::op_compute_s).
using ComputeOpSeconds = std::function<double(const Schedule& schedule, const Op& op)>;

// The least compute of the busiest GPU: every block with work once per pass, all heads in one
// kernel, priced by `seconds`, divided over the GPUs.
double least_busiest_compute_s(const Problem& problem, const BlockGrid& grid, int32_t gpus,
                               const ComputeOpSeconds& seconds);

// The distinct streams on which `gpu` runs ops of the given kinds.
int32_t streams_used(const Schedule& schedule, int32_t gpu, std::initializer_list<OpKind> kinds);

struct TimeLowerBound {
  double compute_s = 0;        // the least compute of the busiest GPU
  double communication_s = 0;  // the byte bound over the busiest receiver's bandwidth
  double total_s() const { return std::max(compute_s, communication_s); }
};

// `least_compute_s` from least_busiest_compute_s; `receive_bytes_per_s`: the fastest the GPU
// that received the most can receive in the compared model (0: nothing received).
TimeLowerBound time_lower_bound(const Schedule& schedule, double least_compute_s, double bound_bytes,
                                double receive_bytes_per_s);

// The same for a model other than the alpha-beta one (the simulator): its compute priced by
// `seconds`, and the byte bound of the schedule's problem.
TimeLowerBound time_lower_bound(const Schedule& schedule, const BlockGrid& grid, const ComputeOpSeconds& seconds,
                                double receive_bytes_per_s);

}  // namespace tessera::costmodel
