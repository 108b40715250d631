#include "tessera/backend/npy_file.hpp"

#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "tessera/core/error.hpp"

namespace tessera::backend {

// The values are copied as the machine stores them; .npy files here are little-endian.
static_assert(std::endian::native == std::endian::little, "the .npy writer and reader assume a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
constexpr size_t kAlignment = 64;              // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kMaxHeaderBytes = 1 << 16;    // a real header is under 200 bytes

size_t item_bytes(NpyType type) { return type == NpyType::float32 ? 4 : 8; }

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw UserError(path + ": " + what); }

// The header dict, read as NumPy writes it (keys in any order, single or double quotes).
class HeaderReader {
 public:
  HeaderReader(const std::string& path, std::string text) : path_(path), text_(std::move(text)) {}

  // The text after `key` and its colon, blanks skipped.
  size_t value_of(const std::string& key) const {
    for (const char quote : {'\'', '"'}) {
      const size_t at = text_.find(quote + key + quote);
      if (at == std::string::npos) continue;
      size_t position = at + key.size() + 2;
      position = skip_blanks(position);
      if (position >= text_.size() || text_[position] != ':') break;
      return skip_blanks(position + 1);
    }
    fail(path_, "header has no '" + key + "' (expected {'descr': '<f4', 'fortran_order': False, 'shape': (...)})");
  }
  NpyType descr() const {
    const size_t at = value_of("descr");
    const char quote = text_[at];
    const size_t end = (quote == '\'' || quote == '"') ? text_.find(quote, at + 1) : std::string::npos;
    if (end == std::string::npos) fail(path_, "header: 'descr' is not a quoted dtype");
    const std::string descr = text_.substr(at + 1, end - at - 1);
    if (descr == "<f4") return NpyType::float32;
    if (descr == "<f8") return NpyType::float64;
    fail(path_, "dtype " + tessera::quoted(descr) +
                    " is not supported (expected little-endian float32 '<f4' or float64 '<f8')");
  }
  bool fortran_order() const {
    const size_t at = value_of("fortran_order");
    if (text_.compare(at, 5, "False") == 0) return false;
    if (text_.compare(at, 4, "True") == 0) return true;
    fail(path_, "header: 'fortran_order' is neither True nor False");
  }
  std::vector<int64_t> shape() const {
    size_t at = value_of("shape");
    if (text_[at] != '(') fail(path_, "header: 'shape' is not a tuple");
    std::vector<int64_t> shape;
    at = skip_blanks(at + 1);
    while (at < text_.size() && text_[at] != ')') {
      if (!std::isdigit(static_cast<unsigned char>(text_[at]))) fail(path_, "header: 'shape' holds something other than sizes");
      int64_t size = 0;
      while (at < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at]))) {
        if (size > (std::numeric_limits<int64_t>::max() - 9) / 10) fail(path_, "header: a size in 'shape' is too large");
        size = size * 10 + (text_[at++] - '0');
      }
      shape.push_back(size);
      at = skip_blanks(at);
      if (at < text_.size() && text_[at] == ',') at = skip_blanks(at + 1);
    }
    if (at >= text_.size()) fail(path_, "header: 'shape' is not closed");
    return shape;
  }

 private:
  size_t skip_blanks(size_t position) const {
    while (position < text_.size() && (text_[position] == ' ' || text_[position] == '\t')) ++position;
    return position;
  }
  const std::string& path_;
  std::string text_;
};

uint64_t little_endian(const unsigned char* bytes, size_t count) {
  uint64_t value = 0;
  for (size_t k = 0; k < count; ++k) value |= static_cast<uint64_t>(bytes[k]) << (8 * k);
  return value;
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t k = 0; k < shape.size(); ++k) text += (k ? ", " : "") + std::to_string(shape[k]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<double>& values,
               NpyType type) {
  size_t count = 1;
  for (int64_t size : shape) count *= static_cast<size_t>(size);
  if (count != values.size())
    throw std::logic_error("write_npy: " + std::to_string(values.size()) + " values for shape " + shape_text(shape));
  std::string header = std::string("{'descr': '") + (type == NpyType::float32 ? "<f4" : "<f8") +
                       "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  // Magic, version (2 bytes), header length (2 bytes), header: padded to the alignment, ending in '\n'.
  const size_t preamble = kMagicBytes + 4;
  header.append(kAlignment - (preamble + header.size() + 1) % kAlignment, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, "cannot write the file");
  out.write(kMagic, kMagicBytes);
  const unsigned char version_and_length[4] = {1, 0, static_cast<unsigned char>(header.size() & 0xff),
                                               static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(version_and_length), 4);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (type == NpyType::float64) {
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 8));
  } else {
    std::vector<float> narrowed(values.begin(), values.end());
    out.write(reinterpret_cast<const char*>(narrowed.data()), static_cast<std::streamsize>(narrowed.size() * 4));
  }
  out.flush();
  if (!out) fail(path, "writing failed (disk full?)");
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code size_error;
  const uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  if (!in || size_error) fail(path, "cannot be read (expected a .npy file)");
  unsigned char preamble[12] = {};
  in.read(reinterpret_cast<char*>(preamble), 10);
  if (in.gcount() < 10 || std::memcmp(preamble, kMagic, kMagicBytes) != 0)
    fail(path, "not a .npy file (it does not start with \\x93NUMPY)");
  const int major = preamble[6];
  if (major < 1 || major > 3 || preamble[7] != 0)
    fail(path, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(preamble[7]) +
                   " (expected 1.0, 2.0 or 3.0)");
  size_t length_bytes = 2;
  if (major >= 2) {
    in.read(reinterpret_cast<char*>(preamble + 10), 2);
    if (in.gcount() < 2) fail(path, "truncated in its header");
    length_bytes = 4;
  }
  const uint64_t header_bytes = little_endian(preamble + 8, length_bytes);
  const uint64_t data_offset = 8 + length_bytes + header_bytes;
  if (header_bytes > kMaxHeaderBytes || data_offset > file_bytes)
    fail(path, "truncated in its header (the header says " + std::to_string(header_bytes) + " bytes, the file has " +
                   std::to_string(file_bytes) + " in all)");
  std::string header(static_cast<size_t>(header_bytes), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  if (header.empty() || header.back() != '\n' || header.find('{') == std::string::npos)
    fail(path, "the header is not a dict ending in a newline");
  const HeaderReader reader(path, header);
  NpyArray array;
  array.type = reader.descr();
  if (reader.fortran_order()) fail(path, "fortran_order is True (expected C order: numpy.ascontiguousarray)");
  array.shape = reader.shape();
  // The count is bounded by the file's own size before anything is allocated.
  const uint64_t data_bytes = file_bytes - data_offset;
  uint64_t count = 1;
  for (int64_t size : array.shape) {
    if (size != 0 && count > data_bytes / static_cast<uint64_t>(size))
      fail(path, "truncated: the shape " + shape_text(array.shape) + " needs more data than the file holds");
    count *= static_cast<uint64_t>(size);
  }
  const uint64_t expected_bytes = count * item_bytes(array.type);
  if (data_bytes < expected_bytes)
    fail(path, "truncated: " + std::to_string(data_bytes) + " bytes of data, the shape " + shape_text(array.shape) +
                   " needs " + std::to_string(expected_bytes));
  if (data_bytes > expected_bytes)
    fail(path, std::to_string(data_bytes - expected_bytes) + " bytes after the array of shape " +
                   shape_text(array.shape) + " (expected the file to end there)");
  array.values.resize(static_cast<size_t>(count));
  if (array.type == NpyType::float64) {
    in.read(reinterpret_cast<char*>(array.values.data()), static_cast<std::streamsize>(expected_bytes));
  } else {
    std::vector<float> narrow(static_cast<size_t>(count));
    in.read(reinterpret_cast<char*>(narrow.data()), static_cast<std::streamsize>(expected_bytes));
    array.values.assign(narrow.begin(), narrow.end());
  }
  if (static_cast<uint64_t>(in.gcount()) != expected_bytes) fail(path, "reading failed");
  return array;
}

}  // namespace tessera::backend
