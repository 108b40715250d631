// Fuzzes what a resumed sweep reads back from its output directory (sweep/results.hpp): the
// journal DIR/journal.jsonl, one JSON line per finished point. read_and_repair cuts a torn last
// line off the file, so each input is written to a fresh scratch file first.
#include "fuzz_common.hpp"
#include "tessera/sweep/results.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile scratch("journal.jsonl");
  // The seeds are written with this hash and for a sweep of this many points.
  static const sweep::Journal journal(scratch.path(), "0123456789abcdef");
  constexpr size_t kPoints = 16;
  return fuzz::expect_user_errors_only([&] {
    scratch.write(fuzz::text_of(data, size));
    for (const sweep::Entry& entry : journal.read_and_repair(kPoints)) {
      if (entry.index >= kPoints) fuzz::finding("a journal entry outside the sweep was accepted");
      (void)sweep::csv_row(entry.row);
      (void)sweep::jsonl_row(entry.row);
    }
  });
}
