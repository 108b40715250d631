// Peak memory follows from the buffers (DESIGN.md 2b): a ring holds a bounded number of remote
// chunks, Mesh-Attention caches the chunks of its tile (research/papers.md A.3 "Memory": Mesh
// needs more than Ring). Expected values come from chunk sizes, never from the program's output.
#include <catch2/catch.hpp>
#include <vector>

#include "common/problems.hpp"
#include "tessera/core/data_size.hpp"
#include "tessera/schedules/checker.hpp"
#include "tessera/costmodel/cost.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;
using namespace tessera::costmodel;

namespace {

Problem llama_both(int64_t seq_len) { return test::llama_like(seq_len, MaskKind::causal, Pass::both); }  // bf16 by default

CostReport cost_of(const std::string& algorithm, const Problem& problem, int32_t gpus, std::optional<TileShape> tile,
                   int32_t buffers) {
  GeneratorOptions options;
  options.gpus = gpus;
  options.tile = tile;
  options.layout = Layout::zigzag;
  options.buffers = buffers;
  const Schedule schedule = generate_schedule(algorithm, problem, options);
  const BlockGrid grid(problem, Layout::zigzag, gpus);
  const CheckResult check = check_schedule(schedule, grid);
  INFO(check.violation);
  REQUIRE(check.ok());
  return cost_schedule(schedules::check(schedule), Hardware{});
}

}  // namespace

TEST_CASE("ring holds a bounded number of chunks; mesh caches its tile", "[memory]") {
  // 256 GPUs, 1M tokens, causal, GQA 8 (the paper's setting): 4096 tokens per chunk.
  const int32_t gpus = 256;
  const Problem problem = llama_both(int64_t{1} << 20);
  const double kv_bytes = static_cast<double>(item_bytes(problem, 1, 4096, DataKind::KV));   // 16.8 MB
  const double q_bytes = static_cast<double>(item_bytes(problem, 1, 4096, DataKind::Q));     // 33.6 MB
  const CostReport ring = cost_of("ring", problem, gpus, std::nullopt, 2);
  const CostReport mesh = cost_of("mesh", problem, gpus, TileShape{16, 16}, 2);
  // Ring, double-buffered: at most two KV chunks in the kv stream and two dK/dV partials in
  // the dkv stream, plus the partial it is adding to before passing it on.
  CHECK(ring.peak_transfer_bytes_max >= 2 * kv_bytes);
  CHECK(ring.peak_transfer_bytes_max <= 5 * kv_bytes);
  // Mesh 16x16 ends its forward holding its tile's 15 remote query and 15 remote key/value chunks.
  CHECK(mesh.peak_transfer_bytes_max >= 15 * (q_bytes + kv_bytes));
  CHECK(ring.peak_transfer_bytes_max <= mesh.peak_transfer_bytes_max);
  // Unbounded, the same ring's receives run ahead of its compute in the execution order.
  const CostReport unbounded = cost_of("ring", problem, 16, std::nullopt, 0);
  const CostReport bounded = cost_of("ring", problem, 16, std::nullopt, 2);
  CHECK(bounded.peak_transfer_bytes_max <= unbounded.peak_transfer_bytes_max);
  // Resident memory is the GPU's own chunks, inputs and outputs, whatever the schedule.
  CHECK(ring.gpus[0].resident_bytes == mesh.gpus[0].resident_bytes);
}

TEST_CASE("memory at any batch: the chunks a ring holds, each the batch's bytes", "[memory]") {
  // Ring pass-KV, forward only, double-buffered, full mask: a GPU holds its own Q, K/V, O and LSE
  // throughout, and on top only remote K/V chunks (queries and partials stay home): on two GPUs
  // exactly one, the other's. Bytes come from item_bytes at the batch asked for, so a walk made
  // at one sequence and scaled must land on them exactly; on four GPUs each GPU's remote bytes
  // must be a whole number of the batch's chunks, its own number at every batch (the execution
  // order runs some GPUs' receives ahead of others').
  std::vector<int64_t> chunks_on_four;
  for (const int64_t batch : {1, 3, 7}) {
    for (const int32_t gpus : {2, 4}) {
      INFO("batch " << batch << ", " << gpus << " GPUs");
      Problem problem = llama_both(16384);
      problem.batch = batch;
      problem.mask.kind = MaskKind::full;
      problem.pass = Pass::forward;
      const int64_t tokens = problem.seq_len / gpus;
      auto bytes = [&](DataKind kind) { return item_bytes(problem, 1, tokens, kind); };
      const CostReport ring = cost_of("ring", problem, gpus, std::nullopt, 2);
      const int64_t resident = bytes(DataKind::Q) + bytes(DataKind::KV) + bytes(DataKind::O) + bytes(DataKind::LSE);
      for (size_t g = 0; g < ring.gpus.size(); ++g) {
        const GpuCost& gpu = ring.gpus[g];
        CHECK(gpu.resident_bytes == resident);
        REQUIRE(gpu.peak_transfer_bytes % bytes(DataKind::KV) == 0);
        const int64_t chunks = gpu.peak_transfer_bytes / bytes(DataKind::KV);
        if (gpus == 2) {
          CHECK(chunks == 1);
        } else {
          CHECK(chunks >= 1);
          if (batch == 1) chunks_on_four.push_back(chunks);
          CHECK(chunks == chunks_on_four[g]);
        }
      }
    }
  }
}
