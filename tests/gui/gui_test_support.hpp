#pragma once
// Small scenarios for the GUI tests: every expected number below is derived from the schedule
// definitions (ring: GPU p computes query chunk p against every KV chunk; mesh a x b: GPU
// R*a + C holds query chunks {R*a + c} and KV chunks {C + r*a}), not from the GUI's output.
#include "models/session.hpp"

namespace tessera::gui::test {

// P GPUs, N = 4096 * P tokens, 4 heads, 4 KV heads, d = 64, bf16, forward only, full mask,
// contiguous layout (block (i, j) of a ring is then computed by GPU i).
inline Session small_session(int gpus, const std::string& algorithm, const std::string& topology) {
  Session session;
  session.problem.gpus = std::to_string(gpus);
  session.problem.seq = std::to_string(4096 * gpus);
  session.problem.heads = "4";
  session.problem.kv_heads = "4";
  session.problem.head_dim = "64";
  session.problem.dtype = "bf16";
  session.problem.mask = "full";
  session.problem.layout = "contiguous";
  session.problem.pass = "forward";
  session.schedule.algorithm = algorithm;
  session.network.topology = topology;
  session.network.placement = "linear";
  return session;
}

}  // namespace tessera::gui::test
