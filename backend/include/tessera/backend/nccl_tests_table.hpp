#pragma once
// The text tables nccl-tests prints (all_reduce_perf, all_gather_perf, sendrecv_perf,
// alltoall_perf), read for `tessera calibrate --from-nccl-tests`:
//   # Collective test starting: all_reduce_perf
//   #  Rank  0 Group  0 Pid   6899 on host-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3
//   #       size   count   type   redop   root   time  algbw  busbw #wrong   time  algbw  busbw #wrong
//          8388608 2097152 float    sum     -1  571.9  14.67  27.50      0  563.5  14.89  27.91      0
// Lines tagged by mpirun (`[1,0]<stdout>:`) are read too. The columns are told by the header
// line: the size in bytes is the first, and each "time" (microseconds; out-of-place, then
// in-place where printed) is counted from the right, where every version of the tool puts the
// same four columns (time, algbw, busbw, #wrong) per group. Which test wrote the table comes
// from its "Collective test starting" line or else the file's name; the ranks and their hosts
// from the "Rank ... on HOST" lines, or else the ratio of busbw to algbw.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::backend {

enum class NcclTest { all_reduce, all_gather, sendrecv, alltoall };
std::string to_string(NcclTest test);  // "all_reduce_perf", ...

struct NcclTestsRow {
  int64_t size_bytes = 0;
  std::vector<double> times_s;  // out-of-place, and in-place where printed (N/A left out)
  int line = 0;
};

struct NcclTestsTable {
  std::string path;
  NcclTest test = NcclTest::all_reduce;
  int32_t ranks = 0;               // 0: not stated and not needed (sendrecv)
  std::vector<std::string> hosts;  // distinct hosts of the Rank lines; empty: not stated
  std::vector<NcclTestsRow> rows;
};

// Reads and checks one file. UserError "PATH:LINE: what was expected" for a row that is cut
// short or holds something other than numbers, and "PATH: ..." for a file with no header, no
// rows or no way to tell its test or rank count.
NcclTestsTable read_nccl_tests_table(const std::string& path);

// The nccl-tests conventions (doc/PERFORMANCE.md): busbw = algbw x bus_factor, the bytes each
// rank moves over its own link per byte of the size column (all-reduce 2(n-1)/n; all-gather and
// all-to-all (n-1)/n, the size column being the whole gathered array; send/recv 1).
double bus_factor(NcclTest test, int32_t ranks);
// Messages each rank sends one after another, each paying the link's latency: the ring's steps
// (all-reduce 2(n-1), all-gather n-1), one for a send/recv and for a direct all-to-all, whose
// messages to the n-1 peers go out at once.
int32_t sequential_steps(NcclTest test, int32_t ranks);

}  // namespace tessera::backend
