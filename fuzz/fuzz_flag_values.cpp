// Fuzzes the values the command line parses itself (CLI11 only splits the flags): the first byte
// picks the parser, the rest is the value as typed.
//   0 bandwidth with its unit (--bandwidth 400Gb/s, core/units.hpp)
//   1 token counts and sizes (--seq 128K, --size 1G: parse_count)
//   2 tile shape AxB (--tile 8x16)
//   3 document lengths (--mask documents --documents 512K,512K)
//   4 placement orders (--placement list:3,0,1,2, stride:4+rail-aligned:2, ...) on 16 GPUs
//   5 topology preset names (--topology h100-ib:4, torus-4x4, ring-8)
//   6 the problem's counts (--gpus, --batch, --heads, --head-dim, --window, --buffers, ...)
//   7 the words (--dtype, --mask, --pass, --layout, --model, --collective, mesh hop order)
//   8 the hardware's numbers (--peak-tflops 1e999, --latency-us inf: what CLI11 reads as a
//     double) and bandwidths, through make_hardware
// Beside "UserError or nothing", each parser's result is checked for what its callers assume:
// a positive finite bandwidth, a non-negative count, a placement that is a set of distinct GPUs.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "fuzz_common.hpp"
#include "tessera/core/layout.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/core/units.hpp"
#include "tessera/scenario/scenario.hpp"
#include "tessera/schedules/mesh_plan.hpp"
#include "tessera/sim/collective_sim.hpp"
#include "tessera/sim/engine.hpp"
#include "tessera/topologies/description.hpp"
#include "tessera/topologies/placement.hpp"

using namespace tessera;

namespace {

void bandwidth(const std::string& value) {
  const double bytes_per_s = parse_bandwidth_bytes_per_s(value, "--bandwidth");
  if (!std::isfinite(bytes_per_s) || !(bytes_per_s > 0)) fuzz::finding("a bandwidth that is not positive and finite");
}

void count(const std::string& value) {
  if (parse_count(value) < 0) fuzz::finding("a negative count");
}

void tile(const std::string& value) {
  const TileShape shape = parse_tile(value);
  if (shape.first <= 0 || shape.second <= 0) fuzz::finding("a tile with a side that is not positive");
}

void documents(const std::string& value) {
  scenario::ProblemText problem;
  problem.mask = "documents";
  problem.documents = value;
  problem.seq = "1M";
  (void)scenario::make_problem(problem);
}

void placement(const std::string& value, uint8_t ranks_byte) {
  static const auto topology = std::make_shared<topo::Topology>(topo::load_topology("h100-ib:2"));
  const int32_t ranks = 1 + ranks_byte % topology->gpu_count();
  const std::vector<int32_t> gpus = topo::order_ranks(*topology, ranks, value);
  std::set<int32_t> distinct(gpus.begin(), gpus.end());
  if (static_cast<int32_t>(gpus.size()) != ranks || distinct.size() != gpus.size() ||
      (!gpus.empty() && (*distinct.begin() < 0 || *distinct.rbegin() >= topology->gpu_count())))
    fuzz::finding("a placement that is not one distinct GPU per rank");
}

void preset(const std::string& value) {
  // A name with a '/' is read as a file: the topology target fuzzes files, and this one must not
  // wander the file system (the runs start in an empty directory, so plain names are no files).
  if (value.find('/') != std::string::npos) return;
  (void)topo::load_topology(value);
}

void problem_count(const std::string& value, uint8_t which) {
  scenario::ProblemText problem;
  problem.seq = "64K";
  problem.gpus = "16";
  scenario::ScheduleText schedule;
  switch (which % 9) {
    case 0: problem.gpus = value; break;
    case 1: problem.seq = value; break;
    case 2: problem.batch = value; break;
    case 3: problem.heads = value; break;
    case 4: problem.kv_heads = value; break;
    case 5: problem.head_dim = value; break;
    case 6: problem.head_dim_v = value; break;
    case 7: problem.mask = "sliding-window"; problem.window = value; break;
    default: problem.buffers = value; break;
  }
  (void)scenario::make_problem(problem);
  (void)scenario::make_options(problem, schedule);
}

void word(const std::string& value, uint8_t which) {
  switch (which % 8) {
    case 0: (void)parse_dtype(value); break;
    case 1: (void)parse_mask_kind(value); break;
    case 2: (void)parse_pass(value); break;
    case 3: (void)parse_layout(value); break;
    case 4: (void)sim::parse_fidelity(value); break;
    case 5: (void)sim::parse_collective(value); break;
    case 6: (void)schedules::parse_mesh_order(value); break;
    default: {
      CollectiveKind kind;
      (void)parse_collective_kind(value, kind);
      break;
    }
  }
}

void hardware(const std::string& value, uint8_t which) {
  scenario::HardwareValues values;
  const double number = std::strtod(value.c_str(), nullptr);
  switch (which % 11) {
    case 0: values.peak_tflops = number; break;
    case 1: values.efficiency = number; break;
    case 2: values.hbm_gbps = number; break;
    case 3: values.bandwidth_gbps = number; break;
    case 4: values.latency_us = number; break;
    case 5: values.launch_us = number; break;
    case 6: values.overhead_us = number; break;
    case 7: values.nvlink_message_us = number; break;
    case 8: values.network_message_us = number; break;
    case 9: values.hbm_bandwidth = value; break;
    default: values.bandwidth = value; break;
  }
  const costmodel::Hardware built = scenario::make_hardware(values);
  for (double figure : {built.peak_flops_per_s, built.compute_efficiency, built.hbm_bytes_per_s, built.link_bytes_per_s,
                        built.link_latency_s, built.kernel_launch_s, built.message.overhead_s,
                        built.message.nvlink_latency_s, built.message.network_latency_s})
    if (!std::isfinite(figure) || figure < 0) fuzz::finding("make_hardware accepted a figure that is not finite");
  if (!(built.peak_flops_per_s * built.compute_efficiency > 0) || !(built.link_bytes_per_s > 0) ||
      !(built.hbm_bytes_per_s > 0))
    fuzz::finding("make_hardware accepted a rate that is not positive");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t parser = data[0], which = data[1];
  const std::string value = fuzz::text_of(data + 2, size - 2);
  return fuzz::expect_user_errors_only([&] {
    switch (parser % 9) {
      case 0: bandwidth(value); break;
      case 1: count(value); break;
      case 2: tile(value); break;
      case 3: documents(value); break;
      case 4: placement(value, which); break;
      case 5: preset(value); break;
      case 6: problem_count(value, which); break;
      case 7: word(value, which); break;
      default: hardware(value, which); break;
    }
  });
}
