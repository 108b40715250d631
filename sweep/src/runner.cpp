#include "tessera/sweep/runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "file_io.hpp"
#include "stop_signals.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_io.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/core/progress_line.hpp"

namespace tessera::sweep {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int Communicator::default_jobs() const { return default_threads(); }

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Rank 0 computes, every rank receives; an error on rank 0 is thrown on every rank.
template <typename Make>
std::string shared(Communicator& communicator, Make make) {
  std::string payload;
  if (communicator.rank() == 0) {
    try {
      payload = "O" + make();
    } catch (const UserError& error) {
      payload = std::string("E") + error.what();
    }
  }
  payload = communicator.broadcast(payload);
  if (payload.empty() || payload[0] == 'E') throw UserError(payload.empty() ? "rank 0 sent nothing" : payload.substr(1));
  return payload.substr(1);
}

std::string read_text(const std::string& path) { return file_io::read_text(path, "sweep spec", file_io::kSpecBytesPerByte); }

std::string encode(const std::vector<size_t>& indices) {
  std::string text;
  for (size_t index : indices) text += std::to_string(index) + "\n";
  return text;
}
std::vector<size_t> decode(const std::string& text) {
  std::vector<size_t> indices;
  std::istringstream stream(text);
  size_t index = 0;
  while (stream >> index) indices.push_back(index);
  return indices;
}

json metadata(const Spec& spec, const std::string& spec_path, const RunOptions& options, const std::string& hash,
              size_t points, size_t completed, int ranks, int jobs, size_t evaluated, double wall_s) {
  json columns = json::array();
  for (const Column& column : result_columns()) columns.push_back(column.name);
  json outputs = json::array();
  if (spec.write_csv) outputs.push_back("results.csv");
  if (spec.write_jsonl) outputs.push_back("results.jsonl");
  return json{{"tool", "tessera"},
              {"version", options.tool_version},
              {"name", spec.name},
              {"spec", "spec.yaml"},
              {"spec_source", spec_path},
              {"inputs_hash", hash},
              {"inputs_hash_covers", "tool version, spec text, topology files named by the spec"},
              {"points", points},
              {"completed", completed},
              {"complete", completed == points},
              {"outputs", outputs},
              {"journal", "journal.jsonl"},
              {"columns", columns},
              {"last_run", {{"ranks", ranks}, {"jobs_per_rank", jobs}, {"points_evaluated", evaluated}, {"wall_s", wall_s}}}};
}

// The state file a previous run left (DIR/sweep.json), checked before resuming: it must be
// tessera's, for these inputs (the hash covers the spec, its topology files and the tool
// version) and this number of points. The fields a resume relies on are read and typed.
void check_previous_state(const std::string& path, const std::string& out_dir, const std::string& hash,
                          size_t points) {
  const json state = read_json_file(path, "sweep's state file");
  const JsonReader reader(path);
  reader.object(state, "");
  const std::string tool = reader.text(reader.field(state, "", "tool"), "tool");
  if (tool != "tessera") reader.fail("tool", "expected \"tessera\", got " + tessera::quoted(tool));
  const std::string previous = reader.text(reader.field(state, "", "inputs_hash"), "inputs_hash");
  if (previous != hash)
    throw UserError(out_dir + " holds the results of other inputs (" + path + ": inputs hash " + tessera::quoted(previous) +
                    ", this run " + hash + "): the spec, a topology file or the tool version changed; use another "
                    "--out directory or delete this one");
  const int64_t recorded = reader.integer(reader.field(state, "", "points"), "points", 0, INT64_MAX);
  if (static_cast<uint64_t>(recorded) != points)
    reader.fail("points", std::to_string(recorded) + ", but this spec has " + std::to_string(points) +
                              " points (a state file of another sweep)");
  reader.integer(reader.field(state, "", "completed"), "completed", 0, recorded);
  reader.boolean(reader.field(state, "", "complete"), "complete");
  reader.text(reader.field(state, "", "version"), "version");
  reader.text(reader.field(state, "", "journal"), "journal");
}

// Appends to an error the way back: the rows are safe in the journal, and the same command
// resumes.
std::string with_resume_hint(const std::string& error, size_t rows_kept, const std::string& journal) {
  return error + "; the " + std::to_string(rows_kept) + " rows in " + journal +
         " are kept: make room (or fix the directory) and run the same command again to resume";
}

}  // namespace

RunSummary run_sweep(const std::string& spec_path, const RunOptions& options, Communicator& communicator) {
  const auto started = Clock::now();
  const bool root = communicator.rank() == 0;
  const int ranks = communicator.size();
  const int jobs = options.jobs > 0 ? options.jobs : communicator.default_jobs();
  if (options.out_dir.empty()) throw UserError("--out: a directory for the results is required");

  const std::string text = shared(communicator, [&] {
    std::string read = read_text(spec_path);
    if (options.check_spec) options.check_spec(parse_spec(read, spec_path));
    return read;
  });
  const Spec spec = parse_spec(text, spec_path);
  const PointSet points = enumerate_points(spec);
  RunSummary summary;
  summary.points = points.size();
  summary.inputs_hash = inputs_hash(spec, options.tool_version);

  const std::filesystem::path dir(options.out_dir);
  summary.journal = (dir / "journal.jsonl").string();
  const Journal journal(summary.journal, summary.inputs_hash);
  std::optional<JournalWriter> writer;  // rank 0's
  // On one rank, the rows the tables are made of, kept instead of read back from the journal at
  // the end: those the journal held when the run started (read below, to know what is left to
  // do) and those this run appends (kept as they will read back: as_journaled). Together they
  // are what the journal holds at the end, because this run's appends are its only writes: a
  // failed append cuts the file back to its last whole line and stops the run before the
  // tables are made. Several ranks read the journal back at the end instead.
  std::vector<Entry> rows;
  std::vector<size_t> todo = decode(shared(communicator, [&] {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error || !std::filesystem::is_directory(dir, error))
      throw UserError("--out " + tessera::quoted(options.out_dir) + ": cannot create the directory (" +
                      (error ? error.message() : std::string("a file of that name is in the way")) + ")");
    const auto meta_path = dir / "sweep.json";
    if (std::filesystem::exists(meta_path, error))
      check_previous_state(meta_path.string(), options.out_dir, summary.inputs_hash, points.size());
    std::vector<bool> done(points.size(), false);
    rows = journal.read_and_repair(points.size());
    for (const Entry& entry : rows) done[entry.index] = true;
    if (ranks > 1) std::vector<Entry>().swap(rows);  // read back at the end
    std::vector<size_t> remaining;
    for (size_t index = 0; index < points.size(); ++index)
      if (!done[index]) remaining.push_back(index);
    summary.already_done = points.size() - remaining.size();
    write_file_atomically((dir / "spec.yaml").string(), text);
    write_file_atomically((dir / "sweep.json").string(),
                          json_text(metadata(spec, spec_path, options, summary.inputs_hash, points.size(),
                                             summary.already_done, ranks, jobs, 0, 0),
                                    2) +
                              "\n");
    writer.emplace(summary.journal, options.journal_sync);
    return encode(remaining);
  }));
  if (options.limit > 0 && todo.size() > options.limit) todo.resize(options.limit);

  ProgressLine progress(root ? options.progress : nullptr, todo.size(), "points");
  // Points share a schedule only when they agree on every schedule field; when no two do (the
  // problem axes alone), a cache would hold schedules nobody asks for again, at the cost of its
  // memory: it stays off.
  const bool shared_schedules = points.distinct_count(schedule_fields()) < points.size();
  Evaluator evaluator(shared_schedules ? options.schedule_cache_bytes : 0);  // one per rank: its caches live across rounds
  size_t evaluated = 0;
  std::string failure;  // the first journal write that failed: the run stops there
  if (ranks == 1) {
    const StopSignals signals(options.stop_on_signals);
    std::mutex mutex;
    std::atomic<bool> stop{false};
    rows.reserve(rows.size() + todo.size());  // keeping a row after its append cannot fail
    // Nothing leaves a worker: a failure is recorded, and no point starts after it. Whether to go on.
    auto evaluate_point = [&](size_t index) {
      if (stop.load() || signals.received() != 0) return false;
      std::string line;
      Row row;
      try {
        row = evaluator.evaluate_safely(index, points.values(index));
        line = journal_line(index, summary.inputs_hash, row);
        as_journaled(row);
      } catch (const std::exception& error) {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure.empty()) failure = std::string("cannot journal a point: ") + error.what();
        stop = true;
        return false;
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (stop.load()) return false;  // after a failed write nothing more is written
      try {
        writer->append(line, 1);
        rows.push_back({index, std::move(row)});
        ++evaluated;
        progress.advance(1);
      } catch (const std::exception& error) {
        failure = error.what();
        stop = true;
        return false;
      }
      return true;
    };
    // A worker takes the points of one schedule together (schedule_runs): handed out one by one,
    // the next worker asked for the schedule its neighbour was building and waited for it, and
    // two threads delivered 1.3 cores. Runs are cut at an eighth of each worker's share, so that
    // a sweep of one schedule still spreads over the workers.
    const size_t most = std::max<size_t>(1, todo.size() / (static_cast<size_t>(std::max(jobs, 1)) * 8));
    const std::vector<size_t> runs = schedule_runs(points, todo, most);
    parallel_for(runs.size() - 1, jobs, [&](size_t run) {
      for (size_t position = runs[run]; position < runs[run + 1]; ++position)
        if (!evaluate_point(todo[position])) return;
    });
    summary.stopped_by_signal = signals.received();
  } else {
    // Rounds: each rank takes every size-th point of the round; rank 0 appends the round's
    // rows in index order and tells every rank whether to go on. A killed run loses at most
    // the round in flight.
    const size_t round = static_cast<size_t>(ranks) * static_cast<size_t>(jobs) * 8;
    for (size_t begin = 0; begin < todo.size(); begin += round) {
      const size_t end = std::min(todo.size(), begin + round);
      std::vector<size_t> mine;
      for (size_t position = begin; position < end; ++position)
        if (static_cast<int>((position - begin) % static_cast<size_t>(ranks)) == communicator.rank())
          mine.push_back(todo[position]);
      std::vector<std::string> lines(mine.size());
      parallel_for(mine.size(), jobs, [&](size_t position) {
        const size_t index = mine[position];
        try {
          lines[position] =
              journal_line(index, summary.inputs_hash, evaluator.evaluate_safely(index, points.values(index)));
        } catch (const std::exception&) {
          lines[position].clear();  // not journaled: the next run evaluates it again
        }
      });
      std::string packed;
      for (const std::string& line : lines) packed += line;
      std::vector<std::string> gathered = communicator.gather(packed);
      std::string status = "O";
      if (root) {
        try {
          std::vector<std::pair<size_t, std::string>> all;
          for (const std::string& part : gathered) {
            size_t start = 0;
            while (start < part.size()) {
              const size_t stop = part.find('\n', start);
              std::string line = part.substr(start, stop - start + 1);
              all.emplace_back(json::parse(line).at("index").get<size_t>(), std::move(line));
              start = stop + 1;
            }
          }
          std::sort(all.begin(), all.end());
          std::string block;
          for (const auto& [index, line] : all) block += line;
          writer->append(block, all.size());
          evaluated += all.size();
          progress.advance(all.size());
        } catch (const std::exception& error) {
          status = std::string("E") + error.what();
        }
      }
      status = communicator.broadcast(status);
      if (status.empty() || status[0] != 'O') {
        failure = status.empty() ? std::string("rank 0 sent nothing") : status.substr(1);
        break;
      }
    }
  }
  progress.finish();
  summary.evaluated = evaluated;
  summary.schedules = evaluator.schedule_cache_stats();

  // Rank 0 writes the tables from the journal, in index order.
  if (root) {
    const size_t rows_kept = summary.already_done + evaluated;
    try {
      if (failure.empty()) writer->sync();
    } catch (const UserError& error) {
      failure = error.what();
    }
    writer.reset();  // synced and closed
    if (!failure.empty()) throw UserError(with_resume_hint(failure, rows_kept, summary.journal));
    try {
      std::vector<Entry> entries = ranks == 1 ? std::move(rows) : journal.read_and_repair(points.size());
      std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) { return x.index < y.index; });
      std::string csv = csv_header(), jsonl;
      const size_t status = status_column();
      for (const Entry& entry : entries) {
        const std::string& state = entry.row[status];
        const bool not_applicable = state.rfind("skipped", 0) == 0;
        summary.ok += state == "ok";
        summary.skipped += not_applicable;
        summary.errors += state.rfind("error", 0) == 0;
        if (not_applicable && spec.drop_not_applicable) continue;
        if (spec.write_csv) csv += csv_row(entry.row);
        if (spec.write_jsonl) jsonl += jsonl_row(entry.row);
      }
      summary.complete = entries.size() == points.size();
      if (spec.write_csv) {
        write_file_atomically((dir / "results.csv").string(), csv);
        summary.written.push_back((dir / "results.csv").string());
      }
      if (spec.write_jsonl) {
        write_file_atomically((dir / "results.jsonl").string(), jsonl);
        summary.written.push_back((dir / "results.jsonl").string());
      }
      summary.wall_s = seconds_since(started);
      write_file_atomically((dir / "sweep.json").string(),
                            json_text(metadata(spec, spec_path, options, summary.inputs_hash, points.size(),
                                               entries.size(), ranks, jobs, summary.evaluated, summary.wall_s),
                                      2) +
                                "\n");
      summary.written.push_back((dir / "sweep.json").string());
    } catch (const UserError& error) {
      throw UserError(with_resume_hint(error.what(), rows_kept, summary.journal));
    }
  } else if (!failure.empty()) {
    throw UserError(failure);
  }
  summary.wall_s = seconds_since(started);
  return summary;
}

}  // namespace tessera::sweep
