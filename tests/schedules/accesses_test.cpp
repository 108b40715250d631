// The analysis's per-op access lists (OpAccesses) against op_data, the single definition of what
// an op reads and writes: OpAccesses lists one-item and one-block ops without calling op_data,
// and packs each access into 8 bytes, so both must give back exactly op_data's items, in its
// order (reads, writes, inbox reads, inbox writes).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tessera/schedules/analysis.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/schedules/op_data.hpp"

using namespace tessera;
using namespace tessera::schedules;

namespace {

Problem problem_of(MaskKind mask, Pass pass) {
  Problem problem;
  problem.seq_len = 64;
  problem.heads = 8;
  problem.kv_heads = 2;
  problem.head_dim = 64;
  problem.head_dim_v = 64;
  problem.mask.kind = mask;
  problem.pass = pass;
  return problem;
}

// op_data's lists of one op, as the accesses the analysis should hold for it.
std::vector<std::pair<DataItem, Access>> expected_accesses(const Schedule& schedule, const Op& op) {
  OpData data;
  op_data(schedule, op, data);
  std::vector<std::pair<DataItem, Access>> list;
  for (const auto& item : data.reads) list.emplace_back(item, Access::read);
  for (const auto& item : data.writes) list.emplace_back(item, Access::write);
  for (const auto& item : data.inbox_reads) list.emplace_back(item, Access::inbox_read);
  for (const auto& item : data.inbox_writes) list.emplace_back(item, Access::inbox_write);
  return list;
}

void check_accesses_match_op_data(const std::string& algorithm, const Problem& problem, int32_t gpus) {
  GeneratorOptions options;
  options.gpus = gpus;
  const CheckedSchedule checked = generate_checked(algorithm, problem, options);
  const Schedule& schedule = checked.schedule();
  OpAccesses listed(schedule);
  size_t mismatched = 0, accesses = 0;
  for (size_t index = 0; index < schedule.ops.size(); ++index) {
    std::vector<std::pair<DataItem, Access>> got;
    for (const DataAccess& access : listed.of(index)) got.emplace_back(access.item(), access.access());
    accesses += got.size();
    if (got != expected_accesses(schedule, schedule.ops[index])) ++mismatched;
  }
  CHECK(mismatched == 0);
  CHECK(accesses >= schedule.ops.size());  // every op reads or writes something
  // Listed through a remembering instance, twice over (the check's two walks): the second pass
  // reads the lists the first kept, and both are op_data's. With room for 64 accesses alone,
  // some ops are kept and the rest listed again.
  for (size_t room_bytes : {size_t{1} << 20, 64 * sizeof(DataAccess)}) {
    OpAccesses remembering(schedule, room_bytes);
    size_t differing = 0;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t index = 0; index < schedule.ops.size(); ++index) {
        std::vector<std::pair<DataItem, Access>> got;
        for (const DataAccess& access : remembering.of(index)) got.emplace_back(access.item(), access.access());
        if (got != expected_accesses(schedule, schedule.ops[index])) ++differing;
      }
    CHECK(differing == 0);
  }
}

}  // namespace

TEST_CASE("DataAccess gives back the item and access it was made from", "[analysis]") {
  // The widest values its 8 bytes hold: a head group of 24 bits, a chunk of 31.
  const DataItem item{DataKind::dKV, DataAccess::kHeadGroupLimit - 1, 2147483647};
  const DataAccess access(item, Access::inbox_write);
  CHECK(access.item() == item);
  CHECK(access.kind() == DataKind::dKV);
  CHECK(access.chunk() == 2147483647);
  CHECK(access.access() == Access::inbox_write);
  const DataAccess small(DataItem{DataKind::Q, 0, 0}, Access::read);
  CHECK(small.item() == DataItem{DataKind::Q, 0, 0});
  CHECK(small.access() == Access::read);
}

TEST_CASE("the analysis lists every op's accesses as op_data does", "[analysis]") {
  // A ring moves one chunk per op and computes one block per op (the analysis's fast paths,
  // forward and backward, with merges of received partials); a mesh computes tiles of many
  // blocks (op_data's general path); the others run collectives.
  check_accesses_match_op_data("ring", problem_of(MaskKind::causal, Pass::both), 4);
  check_accesses_match_op_data("ring", problem_of(MaskKind::full, Pass::forward), 3);
  check_accesses_match_op_data("mesh", problem_of(MaskKind::causal, Pass::both), 8);
  check_accesses_match_op_data("attention2d", problem_of(MaskKind::full, Pass::both), 4);
  // Collectives (their members' lists come from CollectiveTransfers): all-to-all, all-gather.
  check_accesses_match_op_data("ulysses", problem_of(MaskKind::causal, Pass::both), 4);
  check_accesses_match_op_data("all-gather", problem_of(MaskKind::causal, Pass::both), 4);
  check_accesses_match_op_data("usp", problem_of(MaskKind::causal, Pass::both), 8);
}

TEST_CASE("the analysis refuses more head groups than an access can hold", "[analysis]") {
  Schedule schedule;
  schedule.gpus = 1;
  schedule.head_groups = DataAccess::kHeadGroupLimit;
  schedule.stream_names = {"compute"};
  ScheduleAnalysis analysis;
  CHECK(analyze_schedule(schedule, analysis).find("head groups") != std::string::npos);
}
