// Fuzzes the .npy reader (backend/npy_file.hpp), as `tessera run --load DIR` uses it, then writes
// what was read and reads it back: an array the reader accepted must survive the writer.
#include "fuzz_common.hpp"
#include "tessera/backend/npy_file.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile scratch("tensor.npy");
  static const fuzz::ScratchFile rewritten("tensor-rewritten.npy");
  return fuzz::expect_user_errors_only([&] {
    const backend::NpyArray array = backend::read_npy(scratch.write(fuzz::text_of(data, size)));
    backend::write_npy(rewritten.path(), array.shape, array.values, array.type);
    try {
      const backend::NpyArray again = backend::read_npy(rewritten.path());
      // NaN is the one value that differs from itself: compare the bits' meaning, not ==.
      bool same = again.shape == array.shape && again.type == array.type && again.values.size() == array.values.size();
      for (size_t k = 0; same && k < array.values.size(); ++k)
        same = again.values[k] == array.values[k] || (again.values[k] != again.values[k] && array.values[k] != array.values[k]);
      if (!same) fuzz::finding("an array the reader accepted reads back different");
    } catch (const UserError& error) {
      fuzz::finding(std::string("an array the reader accepted does not read back: ") + error.what());
    }
  });
}
