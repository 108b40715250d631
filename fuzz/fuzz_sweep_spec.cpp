// Fuzzes sweep specs (sweep/spec.hpp) as `tessera sweep SPEC [--count]` reads them: parse, count
// the points (by arithmetic when nothing expands: any size, never wrapping) and enumerate them
// when there are few.
#include "fuzz_common.hpp"
#include "tessera/sweep/points.hpp"
#include "tessera/sweep/spec.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::expect_user_errors_only([&] {
    const sweep::Spec spec = sweep::parse_spec(fuzz::text_of(data, size), "fuzz.yaml");
    // Enumerating expands `algo: all` and `tile: all`, which builds schedules' candidate lists:
    // kept to small sweeps so that one input stays well under a second.
    const uint64_t product = sweep::product_size(spec);
    if (!sweep::expands(spec)) (void)sweep::count_points(spec);
    if (product <= 64) (void)sweep::enumerate_points(spec);
  });
}
