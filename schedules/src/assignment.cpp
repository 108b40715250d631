// A custom assignment matrix (Mesh-Attention's "Assignment Matrix"): entry [i][j] names the
// GPU computing block (query chunk i, key/value chunk j). The schedule is the plainest one
// that realises it: every GPU fetches the query-side and key/value chunks it lacks straight
// from their owners, computes its blocks, and sends each partial output straight back to its
// owner. Sends go in destination order and receives in source order (query side before
// key/value, row partials before column partials), so every pair of GPUs agrees on the order
// of its messages.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/resource_limits.hpp"
#include "tessera/schedules/generators.hpp"

namespace tessera::schedules {

namespace {

// What the schedule built from a matrix can take per block (query chunk, key/value chunk), and
// pass: the matrix entry and the two "needs" flags, the block itself, and up to four messages
// (a send and a receive each) of an op and up to three items. An estimate on the generous side,
// so that a --gpus the machine cannot hold is refused before anything is allocated.
constexpr double kBytesPerBlockPerPass = 256;

using Matrix = std::vector<std::vector<int32_t>>;

// The file {"gpus": P, "assignment": [[...], ...]}: P rows of P GPU indices (-1 for a block
// that is fully masked). Every failure names the file and the entry.
Matrix read_assignment(const std::string& path, int32_t gpus, const BlockGrid& grid) {
  if (path.empty()) throw UserError("algorithm 'assignment' needs --input FILE (a JSON assignment matrix)");
  const nlohmann::json json = read_json_file(path, "assignment file");
  const JsonReader reader(path);
  if (!json.is_object())
    reader.fail("", std::string("expected an object {\"gpus\": P, \"assignment\": [[...], ...]}, got ") +
                        json.type_name());
  const int64_t file_gpus = reader.integer(reader.field(json, "", "gpus"), "gpus", 1, INT32_MAX);
  if (file_gpus != gpus)
    reader.fail("gpus", "the file is for " + std::to_string(file_gpus) + " GPUs but --gpus is " + std::to_string(gpus));
  const nlohmann::json& rows = reader.array(reader.field(json, "", "assignment"), "assignment");
  const auto size = static_cast<size_t>(gpus);
  if (rows.size() != size)
    reader.fail("assignment", "expected " + std::to_string(gpus) + " rows (one per query chunk), got " +
                                  std::to_string(rows.size()));
  // The shape first: a file of P short rows must not make us allocate P x P entries.
  for (size_t i = 0; i < size; ++i) {
    const std::string where = JsonReader::path_of("assignment", i);
    if (reader.array(rows[i], where).size() != size)
      reader.fail(where, "expected " + std::to_string(gpus) + " entries (one per key/value chunk), got " +
                             std::to_string(rows[i].size()));
  }
  const double passes = grid.problem().pass == Pass::both ? 2 : 1;
  require_memory(static_cast<double>(gpus) * static_cast<double>(gpus) * kBytesPerBlockPerPass * passes,
                 path + ": a schedule from an assignment of " + std::to_string(gpus) + " x " + std::to_string(gpus) +
                     " blocks");
  Matrix matrix(size, std::vector<int32_t>(size, -1));
  for (size_t i = 0; i < size; ++i)
    for (size_t j = 0; j < size; ++j) {
      const std::string cell = JsonReader::path_of(JsonReader::path_of("assignment", i), j);
      const nlohmann::json& entry = rows[i][j];
      if (!entry.is_number_integer())
        reader.fail(cell, std::string("expected a GPU index (or -1 for a masked block), got ") +
                              (entry.is_number() ? json_text(entry) : entry.type_name()));
      // Compared as the type it was read as: an index past INT64_MAX is just a GPU that does
      // not exist, never a wrapped one.
      const bool exists = entry.is_number_unsigned() ? entry.get<uint64_t>() < size
                                                     : entry.get<int64_t>() >= 0 && entry.get<int64_t>() < gpus;
      const bool minus_one = !entry.is_number_unsigned() && entry.get<int64_t>() == -1;
      const bool masked = !grid.has_work(static_cast<int64_t>(i), static_cast<int64_t>(j));
      if (masked && (exists || minus_one)) continue;  // fully masked: nobody computes it
      if (!exists)
        reader.fail(cell, "GPU " + json_text(entry) + " does not exist (" + std::to_string(gpus) + " GPUs); " +
                              (masked ? "write -1 for this fully masked block" : "this block has work and needs one"));
      matrix[i][j] = static_cast<int32_t>(entry.get<int64_t>());
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
