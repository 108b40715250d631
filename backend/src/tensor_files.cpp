#include "tessera/backend/tensor_files.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "tessera/backend/npy_file.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend {

namespace {

struct TensorFile {
  const char* name;
  std::vector<int64_t> shape;
  const char* flags;  // the flags that size it, for a shape that does not match
};

std::vector<int64_t> shape_of(const Problem& problem, int64_t heads, int64_t dim) {
  return {1, problem.seq_len, heads, dim};
}

std::string in_folder(const std::string& folder, const char* name) {
  return (std::filesystem::path(folder) / (std::string(name) + ".npy")).string();
}

std::vector<double> rounded(DType dtype, const std::vector<double>& values) {
  std::vector<double> out(values.size());
  for (size_t index = 0; index < values.size(); ++index) out[index] = round_to_dtype(dtype, values[index]);
  return out;
}

std::vector<double> load(const std::string& folder, const TensorFile& file) {
  const std::string path = in_folder(folder, file.name);
  NpyArray array = read_npy(path);
  if (array.shape != file.shape)
    throw UserError(path + ": shape " + shape_text(array.shape) + " but the problem needs " + shape_text(file.shape) +
                    " (" + file.flags + ")");
  for (size_t index = 0; index < array.values.size(); ++index)
    if (!std::isfinite(array.values[index]))
      throw UserError(path + ": element " + std::to_string(index) + " is not a finite number");
  return std::move(array.values);
}

}  // namespace

void create_tensor_folder(const std::string& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder, error) || access(folder.c_str(), W_OK) != 0)
    throw UserError(folder + ": cannot create or write in the folder for the tensor files");
}

void save_tensor_files(const std::string& folder, const Problem& problem, const AttentionTensors& inputs,
                       const AttentionTensors& outputs) {
  create_tensor_folder(folder);
  const int64_t H = problem.heads, G = problem.kv_heads, d = problem.head_dim, dv = problem.head_dim_v;
  auto input = [&](const char* name, const std::vector<double>& values, int64_t heads, int64_t dim) {
    write_npy(in_folder(folder, name), shape_of(problem, heads, dim), rounded(problem.dtype, values), NpyType::float32);
  };
  input("Q", inputs.q, H, d);
  input("K", inputs.k, G, d);
  input("V", inputs.v, G, dv);
  if (problem.has_backward()) input("dO", inputs.d_out, H, dv);
  auto output = [&](const char* name, const std::vector<double>& values, std::vector<int64_t> shape) {
    if (!values.empty()) write_npy(in_folder(folder, name), shape, values, NpyType::float64);
  };
  output("O", outputs.out, shape_of(problem, H, dv));
  output("LSE", outputs.lse, {1, problem.seq_len, H});
  if (problem.has_backward()) {
    output("dQ", outputs.d_q, shape_of(problem, H, d));
    output("dK", outputs.d_k, shape_of(problem, G, d));
    output("dV", outputs.d_v, shape_of(problem, G, dv));
  }
}

AttentionTensors load_tensor_files(const std::string& folder, const Problem& problem) {
  if (!std::filesystem::is_directory(folder)) throw UserError(folder + ": not a folder (expected Q.npy, K.npy, V.npy, dO.npy in it)");
  require_host_tensor_memory(problem);
  const int64_t H = problem.heads, G = problem.kv_heads, d = problem.head_dim, dv = problem.head_dim_v;
  AttentionTensors tensors;
  tensors.tokens = problem.seq_len;
  tensors.heads = H;
  tensors.kv_heads = G;
  tensors.head_dim = d;
  tensors.head_dim_v = dv;
  tensors.q = load(folder, {"Q", shape_of(problem, H, d), "--seq, --heads, --head-dim"});
  tensors.k = load(folder, {"K", shape_of(problem, G, d), "--seq, --kv-heads, --head-dim"});
  tensors.v = load(folder, {"V", shape_of(problem, G, dv), "--seq, --kv-heads, --head-dim-v"});
  if (problem.has_backward())
    tensors.d_out = load(folder, {"dO", shape_of(problem, H, dv), "--seq, --heads, --head-dim-v"});
  else
    tensors.d_out.assign(static_cast<size_t>(problem.seq_len * H * dv), 0);
  return tensors;
}

}  // namespace tessera::backend
