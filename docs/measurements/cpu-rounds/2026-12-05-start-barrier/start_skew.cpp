// Experiment: the speed reference's busy-devices figure, by makespan and by op durations.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include "tessera/backend/cpu/cpu_executor.hpp"
#include "tessera/backend/tensors.hpp"
#include "tessera/core/schedule.hpp"
#include "tessera/schedules/checker.hpp"
using namespace tessera;
using namespace tessera::backend;
struct Run { schedules::CheckedSchedule checked; AttentionTensors inputs; };
Run blocks(int64_t side, int32_t ranks) {
  Problem p; p.heads = 4; p.kv_heads = 4; p.head_dim = 32; p.head_dim_v = 32; p.dtype = DType::bf16;
  p.seq_len = side * ranks; p.mask = Mask{}; p.mask.kind = MaskKind::documents;
  p.mask.document_lengths.assign(ranks, side); p.pass = Pass::forward;
  ScheduleBuilder b("independent blocks", "", p, Layout::contiguous, ranks);
  const int32_t s = b.stream("compute");
  for (int32_t r = 0; r < ranks; ++r) b.compute(r, Pass::forward, BlockRef{0, r, r}, s);
  Run run{schedules::check(b.finish()), {}};
  run.inputs = random_inputs(run.checked.schedule().problem, 7);
  return run;
}
double lq(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 4]; }
double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char** argv) {
  int side = argc > 1 ? atoi(argv[1]) : 256;
  int reps = argc > 2 ? atoi(argv[2]) : 13;
  int sleep_ms = argc > 3 ? atoi(argv[3]) : 0;
  auto ex = make_cpu_executor(0);
  Run one = blocks(side, 1), two = blocks(side, 2);
  for (int trial = 0; trial < 6; ++trial) {
    std::vector<double> alone, mk, opmax, skew, ratio;
    for (int i = 0; i < reps; ++i) {
      if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      AttentionTensors t = one.inputs; ExecutionRecord r; ex->execute(one.checked, t, r);
      alone.push_back(r.op_finish_s[0] - r.op_start_s[0]);
      AttentionTensors t2 = two.inputs; ExecutionRecord r2; ex->execute(two.checked, t2, r2);
      double first = std::min(r2.op_start_s[0], r2.op_start_s[1]);
      mk.push_back(r2.makespan_s - first);
      opmax.push_back(std::max(r2.op_finish_s[0] - r2.op_start_s[0], r2.op_finish_s[1] - r2.op_start_s[1]));
      skew.push_back(std::abs(r2.op_start_s[0] - r2.op_start_s[1]));
      ratio.push_back(2 * alone.back() / mk.back());
    }
    std::printf("side %d: alone LQ %.3f ms; devices makespan LQ %.3f ms -> %.2fx (median of paired %.2fx); longest op LQ %.3f ms -> %.2fx; start skew median %.3f ms\n",
                side, lq(alone) * 1e3, lq(mk) * 1e3, 2 * lq(alone) / lq(mk), med(ratio), lq(opmax) * 1e3, 2 * lq(alone) / lq(opmax), med(skew) * 1e3);
  }
}
