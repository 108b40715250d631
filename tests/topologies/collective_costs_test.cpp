// Closed-form collective times against the worked checks of research/simulators.md 3 and
// against each other where the formulas must agree.
#include <catch2/catch.hpp>

#include "tessera/topologies/collective_costs.hpp"

using namespace tessera::topo;

TEST_CASE("ring all-reduce of 1 GiB on 8 ranks matches the worked check", "[collectives]") {
  // simulators.md 3.2: 14 x 0.93625 us + 1.75 x 1 GiB / 400 GB/s = 4.7107 ms, busbw 398.9 GB/s.
  const double bytes = 1073741824.0;
  double seconds = ring_collective_s(CollectiveOp::all_reduce, 8, bytes, {0.93625e-6, 400e9});
  CHECK(seconds * 1e3 == Approx(4.7107).margin(5e-5));
  CHECK(bytes / seconds * bus_bandwidth_factor(CollectiveOp::all_reduce, 8) / 1e9 == Approx(398.9).margin(0.05));
}

TEST_CASE("bandwidth-bound ring collectives: busbw equals the link bandwidth", "[collectives]") {
  for (int ranks : {2, 8, 64, 1024}) {
    for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
      double seconds = ring_collective_s(op, ranks, 1e9, {0.0, 50e9});
      CHECK(1e9 / seconds * bus_bandwidth_factor(op, ranks) == Approx(50e9));
    }
  }
}

TEST_CASE("torus all-reduce telescopes to the flat ring bandwidth term", "[collectives]") {
  // 3.4: with equal beta the per-dimension terms sum to 2 (1 - 1/p) n beta; latency 2 sum (k_i - 1) alpha.
  const std::vector<int32_t> dims = {4, 8, 2};
  const double alpha = 1e-6, bytes = 3e8, bandwidth = 100e9;
  double expected = 2 * (3 + 7 + 1) * alpha + 2 * (1 - 1.0 / 64) * bytes / bandwidth;
  CHECK(torus_collective_s(CollectiveOp::all_reduce, dims, bytes, {alpha, bandwidth}) == Approx(expected));
  CHECK(torus_collective_s(CollectiveOp::all_gather, dims, bytes, {alpha, bandwidth}) == Approx(expected / 2));
  // A one-dimensional torus is a ring.
  CHECK(torus_collective_s(CollectiveOp::all_reduce, {16}, bytes, {alpha, bandwidth}) ==
        Approx(ring_collective_s(CollectiveOp::all_reduce, 16, bytes, {alpha, bandwidth})));
  // All-to-all on a bidirectional k x k torus is bisection-bound: k n / (8 B).
  CHECK(torus_collective_s(CollectiveOp::all_to_all, {8, 8}, bytes, {0.0, bandwidth}) == Approx(8 * bytes / (8 * bandwidth)));
}

TEST_CASE("two-level all-reduce matches simulators.md 3.5", "[collectives]") {
  // 2[(g-1) a_in + (g-1)/g n b_nvl] + 2(N-1) a_out + 2 (N-1)/N (n/g) g / (m B_nic).
  const int g = 8, nodes = 16, m = 8;
  const double n = 2e9, a_in = 1e-6, b_nvl = 450e9, a_out = 5e-6, b_nic = 50e9;
  double expected = 2 * ((g - 1) * a_in + (g - 1.0) / g * n / b_nvl) + 2 * (nodes - 1) * a_out +
                    2 * (nodes - 1.0) / nodes * (n / g) * g / (m * b_nic);
  CHECK(hierarchical_collective_s(CollectiveOp::all_reduce, g, nodes, m, n, {a_in, b_nvl}, {a_out, b_nic}) ==
        Approx(expected));
  // Four NICs for eight GPUs halve the network share of each GPU.
  double fewer_nics = hierarchical_collective_s(CollectiveOp::all_reduce, g, nodes, 4, n, {0, b_nvl}, {0, b_nic});
  double inside = 2 * (g - 1.0) / g * n / b_nvl;
  CHECK(fewer_nics - inside == Approx(2 * (2 * (nodes - 1.0) / nodes * n / (m * b_nic))));
}
