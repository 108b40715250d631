// What an op reads and writes (op_data), worked by hand for compute ops whose blocks repeat
// chunks out of order: each list is sorted by kind, then head group, then chunk, each item once.
#include <catch2/catch.hpp>

#include <vector>

#include "tessera/schedules/op_data.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

Schedule with_compute(Pass pass, std::vector<BlockRef> blocks) {
  Schedule schedule;
  schedule.gpus = 4;
  schedule.head_groups = 2;
  schedule.stream_names = {"compute"};
  schedule.blocks = std::move(blocks);
  Op op;
  op.kind = OpKind::compute;
  op.pass = pass;
  op.count = static_cast<uint32_t>(schedule.blocks.size());
  schedule.ops.push_back(op);
  return schedule;
}

std::vector<DataItem> items(DataKind kind, int32_t head_group, std::vector<int32_t> chunks) {
  std::vector<DataItem> list;
  for (int32_t chunk : chunks) list.push_back(DataItem{kind, head_group, chunk});
  return list;
}

std::vector<DataItem> concat(std::initializer_list<std::vector<DataItem>> parts) {
  std::vector<DataItem> list;
  for (const auto& part : parts) list.insert(list.end(), part.begin(), part.end());
  return list;
}

}  // namespace

TEST_CASE("op_data lists a backward compute op's items once each, in key order", "[op_data]") {
  // Query chunks 3, 1 (twice) and 0; key chunks 2 (three times) and 0.
  const Schedule schedule =
      with_compute(Pass::backward, {{0, 3, 2}, {0, 1, 2}, {0, 1, 0}, {0, 0, 2}});
  OpData data;
  op_data(schedule, schedule.ops[0], data);
  CHECK(data.reads == concat({items(DataKind::Q, 0, {0, 1, 3}), items(DataKind::KV, 0, {0, 2}),
                              items(DataKind::dO, 0, {0, 1, 3}), items(DataKind::Stats, 0, {0, 1, 3})}));
  CHECK(data.writes == concat({items(DataKind::dQ, 0, {0, 1, 3}), items(DataKind::dKV, 0, {0, 2})}));
  CHECK(data.inbox_reads.empty());
  CHECK(data.inbox_writes.empty());
}

TEST_CASE("op_data orders a forward compute op's items by head group before chunk", "[op_data]") {
  // Head group 1 comes first in the op but sorts after head group 0.
  const Schedule schedule = with_compute(Pass::forward, {{1, 0, 1}, {0, 2, 3}, {1, 0, 0}, {0, 2, 3}});
  OpData data;
  op_data(schedule, schedule.ops[0], data);
  CHECK(data.reads == concat({items(DataKind::Q, 0, {2}), items(DataKind::Q, 1, {0}), items(DataKind::KV, 0, {3}),
                              items(DataKind::KV, 1, {0, 1})}));
  CHECK(data.writes == concat({items(DataKind::O, 0, {2}), items(DataKind::O, 1, {0}), items(DataKind::LSE, 0, {2}),
                               items(DataKind::LSE, 1, {0})}));
  // The same op again (the stamps of the first call must not hide its chunks).
  op_data(schedule, schedule.ops[0], data);
  CHECK(data.writes.size() == 4);
}

// A ring's band: one query chunk against 100 key chunks in ring order (37 down to 0, then 99
// down to 38), one repeated; the key list still comes out 0..99, once each. Then two head
// groups' bands in reverse, a range of keys too wide for the bitmap: sorted all the same.
TEST_CASE("op_data orders a long band of key chunks taken in ring order", "[op_data]") {
  std::vector<BlockRef> band;
  for (int32_t step = 0; step < 100; ++step) band.push_back({0, 5, (137 - step) % 100});
  band.push_back({0, 5, 37});
  Schedule schedule = with_compute(Pass::forward, band);
  schedule.gpus = 100;
  OpData data;
  op_data(schedule, schedule.ops[0], data);
  std::vector<int32_t> every(100);
  for (int32_t chunk = 0; chunk < 100; ++chunk) every[static_cast<size_t>(chunk)] = chunk;
  CHECK(data.reads == concat({items(DataKind::Q, 0, {5}), items(DataKind::KV, 0, every)}));

  std::vector<BlockRef> two_groups;
  for (int32_t chunk = 39; chunk >= 0; --chunk) two_groups.push_back({1, 7, chunk});
  for (int32_t chunk = 39; chunk >= 0; --chunk) two_groups.push_back({0, 7, chunk});
  schedule = with_compute(Pass::forward, two_groups);
  schedule.gpus = 100;
  op_data(schedule, schedule.ops[0], data);
  const std::vector<int32_t> forty(every.begin(), every.begin() + 40);
  CHECK(data.reads == concat({items(DataKind::Q, 0, {7}), items(DataKind::Q, 1, {7}), items(DataKind::KV, 0, forty),
                              items(DataKind::KV, 1, forty)}));
}

namespace {

// GPU 0 of an all-gather of KV with a reduce-scatter of dKV folded in, as a collective lists it:
// every transfer carries (KV, dKV) of its source's chunk, so the kinds interleave. GPU 0 sends
// its pair to GPUs 1, 2 and 3 and receives theirs, the sources taken in `sources` order.
Schedule all_gather_of_pairs(const std::vector<int32_t>& sources) {
  Schedule schedule;
  schedule.gpus = 4;
  schedule.head_groups = 1;
  schedule.stream_names = {"collective"};
  Collective collective;
  collective.members = {0, 1, 2, 3};
  auto add = [&](int32_t src, int32_t dst) {
    const auto first = static_cast<uint32_t>(schedule.items.size());
    schedule.items.push_back({DataKind::KV, 0, src});
    schedule.items.push_back({DataKind::dKV, 0, src});
    collective.transfers.push_back(Transfer{src, dst, first, 2});
  };
  for (int32_t dst : {1, 2, 3}) add(0, dst);
  for (int32_t src : sources) add(src, 0);
  schedule.collectives.push_back(collective);
  Op op;
  op.kind = OpKind::collective;
  op.peer = 0;
  schedule.ops.push_back(op);
  return schedule;
}

}  // namespace

// Worked by hand: GPU 0 reads what it sends (KV[0] and dKV[0], once though sent three times);
// the partial dKV[0] leaves it (a write), the KV pieces land in place and the dKV partials in its
// inbox. The same lists whether the pieces arrive in order or not (the second takes the sort).
TEST_CASE("op_data orders a collective's interleaved kinds and drops its repeats", "[op_data]") {
  for (const std::vector<int32_t>& sources : {std::vector<int32_t>{1, 2, 3}, std::vector<int32_t>{3, 1, 2}}) {
    CAPTURE(sources);
    const Schedule schedule = all_gather_of_pairs(sources);
    OpData data;
    op_data(schedule, schedule.ops[0], data);
    CHECK(data.reads == concat({items(DataKind::KV, 0, {0}), items(DataKind::dKV, 0, {0})}));
    CHECK(data.writes == concat({items(DataKind::KV, 0, {1, 2, 3}), items(DataKind::dKV, 0, {0})}));
    CHECK(data.inbox_writes == items(DataKind::dKV, 0, {1, 2, 3}));
    CHECK(data.inbox_reads.empty());
  }
}
