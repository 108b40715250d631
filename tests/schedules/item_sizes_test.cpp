// The analysis's item sizes (item_sizes.hpp): one sequence's bytes of every item, which the
// memory walk sums and the cost model scales by the batch. Expected values: closed forms of
// data_size.hpp's definition on a hand-worked problem, and item_bytes itself at other batch
// sizes, uneven chunks and several head groups (the claim that the batch scales them exactly).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "tessera/core/data_size.hpp"
#include "tessera/schedules/generators.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

Problem problem_of(int64_t seq, int64_t batch) {
  Problem problem;
  problem.batch = batch;
  problem.seq_len = seq;
  problem.heads = 8;
  problem.kv_heads = 2;
  problem.head_dim = 64;
  problem.head_dim_v = 32;
  problem.dtype = DType::bf16;
  problem.mask.kind = MaskKind::causal;
  problem.pass = Pass::both;
  return problem;
}

}  // namespace

TEST_CASE("item sizes: one sequence's bytes of each kind, hand-worked", "[item_sizes]") {
  // Ring, contiguous, 4 GPUs, 4096 tokens: chunks of 1024 tokens. Batch 3 in the problem: the
  // table is one sequence's whatever the batch.
  GeneratorOptions options;
  options.gpus = 4;
  options.layout = Layout::contiguous;
  const CheckedSchedule checked = generate_checked("ring", problem_of(4096, 3), options);
  const ItemSizes& sizes = checked.analysis().item_sizes;
  // tokens x heads x dims x 2 bytes (bf16); LSE one fp32 per (token, head), Stats two.
  const int64_t q = 1024 * 8 * 64 * 2, kv = 1024 * 2 * (64 + 32) * 2, o = 1024 * 8 * 32 * 2;
  const int64_t lse = 1024 * 8 * 4, stats = 1024 * 8 * 8;
  for (int32_t chunk = 0; chunk < 4; ++chunk) {
    CHECK(sizes.one_sequence_bytes({DataKind::Q, 0, chunk}) == q);
    CHECK(sizes.one_sequence_bytes({DataKind::dQ, 0, chunk}) == q);
    CHECK(sizes.one_sequence_bytes({DataKind::KV, 0, chunk}) == kv);
    CHECK(sizes.one_sequence_bytes({DataKind::dKV, 0, chunk}) == kv);
    CHECK(sizes.one_sequence_bytes({DataKind::O, 0, chunk}) == o);
    CHECK(sizes.one_sequence_bytes({DataKind::dO, 0, chunk}) == o);
    CHECK(sizes.one_sequence_bytes({DataKind::LSE, 0, chunk}) == lse);
    CHECK(sizes.one_sequence_bytes({DataKind::Stats, 0, chunk}) == stats);
  }
}

TEST_CASE("item sizes: times the batch, every item of the schedule is item_bytes at that batch", "[item_sizes]") {
  // Uneven chunks (4099 tokens on 4 GPUs, zigzag) and several head groups (ulysses, usp).
  for (const std::string algorithm : {"ring", "ulysses", "usp", "mesh", "attention2d"}) {
    GeneratorOptions options;
    options.gpus = 4;
    options.layout = Layout::zigzag;
    const CheckedSchedule checked = generate_checked(algorithm, problem_of(4099, 1), options);
    const Schedule& schedule = checked.schedule();
    const ItemSizes& sizes = checked.analysis().item_sizes;
    std::set<int64_t> distinct;
    for (const int64_t batch : {1, 2, 7}) {
      Problem at_batch = schedule.problem;
      at_batch.batch = batch;
      for (const DataItem& item : schedule.items) {
        const int64_t expected =
            item_bytes(at_batch, schedule.head_groups, checked.grid().chunk_tokens(item.chunk), item.kind);
        INFO(algorithm << " batch " << batch << " " << to_string(item));
        CHECK(batch * sizes.one_sequence_bytes(item) == expected);
        distinct.insert(sizes.one_sequence_bytes(item));
      }
    }
    INFO(algorithm);
    CHECK(distinct.size() > 1);  // uneven chunks and several kinds: a table of one value would be wrong
  }
}

TEST_CASE("op pairs: each pass covers every causal pair once per head group", "[item_sizes]") {
  // N (N + 1) / 2 pairs per head group and pass, whatever the algorithm splits.
  const int64_t seq = 4099;
  const double causal_pairs = static_cast<double>(seq * (seq + 1) / 2);
  for (const std::string algorithm : {"ring", "ulysses", "usp", "mesh", "attention2d", "all-gather"}) {
    GeneratorOptions options;
    options.gpus = 4;
    options.layout = Layout::zigzag;
    const CheckedSchedule checked = generate_checked(algorithm, problem_of(seq, 2), options);
    const Schedule& schedule = checked.schedule();
    const std::vector<double>& table = checked.analysis().op_pairs;
    INFO(algorithm);
    REQUIRE(table.size() == schedule.ops.size());
    double forward = 0, backward = 0;
    for (size_t index = 0; index < table.size(); ++index) {
      const Op& op = schedule.ops[index];
      CHECK(table[index] == op_pairs(schedule, checked.grid(), op));
      if (op.kind != OpKind::compute) CHECK(table[index] == 0);
      (op.pass == Pass::forward ? forward : backward) += table[index];
    }
    CHECK(forward == schedule.head_groups * causal_pairs);
    CHECK(backward == schedule.head_groups * causal_pairs);
  }
}
