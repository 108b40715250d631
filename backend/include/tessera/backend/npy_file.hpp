#pragma once
// NumPy's .npy format, so that tensors can be handed to NumPy or PyTorch and back
// (numpy.lib.format): the magic "\x93NUMPY", a version (1.0 written; 1.0, 2.0 and 3.0 read), the
// header length, a header in Python dict syntax
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 8, 2, 32), }
// padded with spaces and a newline to a multiple of 64 bytes, then the values in C order.
// Only little-endian float32 ('<f4') and float64 ('<f8') arrays: the element types attention
// tensors need. Every file that is not one is refused naming the file and what was expected.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::backend {

enum class NpyType { float32, float64 };

struct NpyArray {
  std::vector<int64_t> shape;
  NpyType type = NpyType::float64;
  std::vector<double> values;  // C order; float32 files widened exactly
};

// Writes `values` (their count must be the product of `shape`) as `type`; float32 rounds to
// nearest. UserError naming the file when it cannot be written.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<double>& values,
               NpyType type);

// Reads and checks a whole file: magic, version, header, dtype, order, shape, and that the data
// is exactly as long as the shape says (a truncated file, or bytes after the array, is refused).
// UserError "PATH: what was expected".
NpyArray read_npy(const std::string& path);

// "(1, 8, 2, 32)", the shape as NumPy prints it ("(8,)" for one dimension).
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace tessera::backend
