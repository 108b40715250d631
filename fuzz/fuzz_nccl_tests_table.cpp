// Fuzzes the nccl-tests table reader and the link fit (backend/nccl_tests_table.hpp,
// link_fit.hpp), as `tessera calibrate --from-nccl-tests FILE` uses them. A fit it returns must
// be a finite, positive bandwidth and a finite latency.
#include <cmath>

#include "fuzz_common.hpp"
#include "tessera/backend/link_fit.hpp"
#include "tessera/backend/nccl_tests_table.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The file's name tells the test when the table does not: all_reduce_perf, the commonest.
  static const fuzz::ScratchFile scratch("all_reduce_perf.txt");
  return fuzz::expect_user_errors_only([&] {
    const backend::NcclTestsTable table = backend::read_nccl_tests_table(scratch.write(fuzz::text_of(data, size)));
    const backend::LinkFit fit = backend::fit_link({table});
    if (!(std::isfinite(fit.bytes_per_s) && fit.bytes_per_s > 0 && std::isfinite(fit.latency_s)))
      fuzz::finding("a fit that is not a finite positive bandwidth and a finite latency");
  });
}
