// A custom assignment matrix (Mesh-Attention's "Assignment Matrix"): entry [i][j] names the
// GPU computing block (query chunk i, key/value chunk j). The schedule is the plainest one
// that realises it: every GPU fetches the query-side and key/value chunks it lacks straight
// from their owners, computes its blocks, and sends each partial output straight back to its
// owner. Sends go in destination order and receives in source order (query side before
// key/value, row partials before column partials), so every pair of GPUs agrees on the order
// of its messages.
#include <fstream>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::schedules {

namespace {

std::vector<std::vector<int32_t>> read_assignment(const std::string& path, int32_t gpus, const BlockGrid& grid) {
  if (path.empty()) throw UserError("algorithm 'assignment' needs --input FILE (a JSON assignment matrix)");
  std::ifstream file(path);
  if (!file) throw UserError(path + ": cannot open the file");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(file);
  } catch (const nlohmann::json::parse_error& error) {
    throw UserError(path + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  if (!json.is_object()) throw UserError(path + ": expected an object {\"gpus\": P, \"assignment\": [[...], ...]}");
  if (!json.contains("gpus") || !json["gpus"].is_number_integer())
    throw UserError(path + ": gpus: expected the GPU count as an integer");
  if (json["gpus"].get<int64_t>() != gpus)
    throw UserError(path + ": gpus: the file is for " + std::to_string(json["gpus"].get<int64_t>()) +
                    " GPUs but --gpus is " + std::to_string(gpus));
  if (!json.contains("assignment") || !json["assignment"].is_array() ||
      json["assignment"].size() != static_cast<size_t>(gpus))
    throw UserError(path + ": assignment: expected " + std::to_string(gpus) + " rows (one per query chunk)");
  std::vector<std::vector<int32_t>> matrix(static_cast<size_t>(gpus), std::vector<int32_t>(static_cast<size_t>(gpus), -1));
  for (int32_t i = 0; i < gpus; ++i) {
    const auto& row = json["assignment"][static_cast<size_t>(i)];
    const std::string where = path + ": assignment[" + std::to_string(i) + "]";
    if (!row.is_array() || row.size() != static_cast<size_t>(gpus))
      throw UserError(where + ": expected " + std::to_string(gpus) + " entries (one per key/value chunk)");
    for (int32_t j = 0; j < gpus; ++j) {
      const auto& entry = row[static_cast<size_t>(j)];
      const std::string cell = where + "[" + std::to_string(j) + "]";
      if (!entry.is_number_integer()) throw UserError(cell + ": expected a GPU index (or -1 for a masked block)");
      int64_t gpu = entry.get<int64_t>();
      if (!grid.has_work(i, j)) continue;  // fully masked: nobody computes it
      if (gpu < 0 || gpu >= gpus)
        throw UserError(cell + ": GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(gpus) +
                        " GPUs); this block has work and needs one");
      matrix[static_cast<size_t>(i)][static_cast<size_t>(j)] = static_cast<int32_t>(gpu);
    }
  }
  return matrix;
}

}  // namespace

Schedule generate_from_assignment(const Problem& problem, const GeneratorOptions& options, const BlockGrid& grid) {
  const int32_t gpus = options.gpus;
  const auto matrix = read_assignment(options.input_path, gpus, grid);
  auto owner = [&](int32_t i, int32_t j) { return matrix[static_cast<size_t>(i)][static_cast<size_t>(j)]; };
  // needs_row[g][i]: GPU g computes some block of row i; needs_column likewise.
  std::vector<std::vector<uint8_t>> needs_row(static_cast<size_t>(gpus), std::vector<uint8_t>(static_cast<size_t>(gpus), 0));
  auto needs_column = needs_row;
  for (int32_t i = 0; i < gpus; ++i)
    for (int32_t j = 0; j < gpus; ++j)
      if (owner(i, j) >= 0) {
        needs_row[static_cast<size_t>(owner(i, j))][static_cast<size_t>(i)] = 1;
        needs_column[static_cast<size_t>(owner(i, j))][static_cast<size_t>(j)] = 1;
      }
  auto row_needed = [&](int32_t gpu, int32_t i) { return needs_row[static_cast<size_t>(gpu)][static_cast<size_t>(i)] != 0; };
  auto column_needed = [&](int32_t gpu, int32_t j) {
    return needs_column[static_cast<size_t>(gpu)][static_cast<size_t>(j)] != 0;
  };

  ScheduleBuilder builder("assignment", to_string(grid.layout()), problem, grid.layout(), gpus);
  const int32_t compute = builder.stream("compute"), send = builder.stream("send"), recv = builder.stream("recv");
  for (Pass pass : {Pass::forward, Pass::backward}) {
    if (pass == Pass::forward ? !problem.has_forward() : !problem.has_backward()) continue;
    const bool backward = pass == Pass::backward;
    builder.set_pass(pass);
    auto q_side = [&](int32_t chunk) {
      if (!backward) return std::vector<DataItem>{{DataKind::Q, 0, chunk}};
      return std::vector<DataItem>{{DataKind::Q, 0, chunk}, {DataKind::dO, 0, chunk}, {DataKind::Stats, 0, chunk}};
    };
    auto row_partial = [&](int32_t chunk) {
      if (backward) return std::vector<DataItem>{{DataKind::dQ, 0, chunk}};
      return std::vector<DataItem>{{DataKind::O, 0, chunk}, {DataKind::LSE, 0, chunk}};
    };
    for (int32_t gpu = 0; gpu < gpus; ++gpu) {
      for (int32_t dst = 0; dst < gpus; ++dst)
        if (dst != gpu && row_needed(dst, gpu)) builder.send(gpu, send, dst, q_side(gpu));
      for (int32_t dst = 0; dst < gpus; ++dst)
        if (dst != gpu && column_needed(dst, gpu)) builder.send(gpu, send, dst, {DataItem{DataKind::KV, 0, gpu}});
      for (int32_t src = 0; src < gpus; ++src)
        if (src != gpu && row_needed(gpu, src)) builder.recv(gpu, recv, src, q_side(src));
      for (int32_t src = 0; src < gpus; ++src)
        if (src != gpu && column_needed(gpu, src)) builder.recv(gpu, recv, src, {DataItem{DataKind::KV, 0, src}});
      std::vector<BlockRef> blocks;
      for (int32_t i = 0; i < gpus; ++i)
        for (int32_t j = 0; j < gpus; ++j)
          if (owner(i, j) == gpu) blocks.push_back(BlockRef{0, i, j});
      builder.compute(gpu, pass, blocks, compute);
      for (int32_t dst = 0; dst < gpus; ++dst)
        if (dst != gpu && row_needed(gpu, dst)) builder.send(gpu, send, dst, row_partial(dst));
      if (backward)
        for (int32_t dst = 0; dst < gpus; ++dst)
          if (dst != gpu && column_needed(gpu, dst)) builder.send(gpu, send, dst, {DataItem{DataKind::dKV, 0, dst}});
      bool row_partials = false, column_partials = false;
      for (int32_t src = 0; src < gpus; ++src)
        if (src != gpu && row_needed(src, gpu)) {
          builder.recv(gpu, recv, src, row_partial(gpu));
          row_partials = true;
        }
      if (backward)
        for (int32_t src = 0; src < gpus; ++src)
          if (src != gpu && column_needed(src, gpu)) {
            builder.recv(gpu, recv, src, {DataItem{DataKind::dKV, 0, gpu}});
            column_partials = true;
          }
      if (row_partials) builder.merge(gpu, compute, row_partial(gpu));
      if (column_partials) builder.merge(gpu, compute, {DataItem{DataKind::dKV, 0, gpu}});
    }
  }
  return builder.finish();
}

}  // namespace tessera::schedules
