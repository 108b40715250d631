#pragma once
// Running a sweep: the points not yet in the journal are evaluated on a pool of threads and
// their rows appended as they finish; at the end the tables are written in index order. Across
// processes (MPI), a Communicator splits the points over ranks in rounds and gathers each
// round's rows on rank 0, which alone touches the output directory. This library has no MPI:
// the MPI communicator lives in tessera_sweep_mpi.
//
// Faults: no exception leaves a worker thread. A point that fails is a row with status
// "error: ..."; a journal that cannot be written (a full disk, a file size limit, a directory
// made unwritable) stops the run: no new point is started, the rows already journaled stay
// intact, and run_sweep throws a UserError naming the file and saying to run the same command
// again, which resumes without losing or repeating a row.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "tessera/sweep/journal_writer.hpp"
#include "tessera/sweep/points.hpp"
#include "tessera/sweep/results.hpp"
#include "tessera/scenario/schedule_cache.hpp"

namespace tessera::sweep {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank 0's text, on every rank.
  virtual std::string broadcast(const std::string& text) = 0;
  // Every rank's text on rank 0, in rank order; empty on the other ranks.
  virtual std::vector<std::string> gather(const std::string& text) = 0;
  // Worker threads per rank when --jobs is not given (the hardware threads shared by the
  // ranks on this machine).
  virtual int default_jobs() const;
};

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string broadcast(const std::string& text) override { return text; }
  std::vector<std::string> gather(const std::string& text) override { return {text}; }
};

struct RunOptions {
  std::string out_dir;
  int jobs = 0;              // worker threads per rank; 0: Communicator::default_jobs()
  size_t limit = 0;          // > 0: evaluate at most this many new points, then stop (resumable)
  std::string tool_version = "unknown";
  std::ostream* progress = nullptr;  // rank 0's progress line (rate, ETA); nullptr: quiet
  // Extra checks of the spec, run on rank 0 before any point (e.g. the figure requests); a
  // UserError it throws stops every rank.
  std::function<void(const Spec&)> check_spec;
  // SIGINT/SIGTERM stop the run cleanly (stop_signals.hpp) instead of ending the process; one
  // process only (under MPI the launcher's signals end the ranks, and the journal survives).
  bool stop_on_signals = false;
  JournalSyncPolicy journal_sync;  // how often the journal is synced to disk
  // The bound of the checked schedules shared by a rank's points (scenario/schedule_cache.hpp);
  // 0: every point generates its own. The results are the same either way. Unused when no two
  // points agree on every schedule field (schedule_fields()).
  size_t schedule_cache_bytes = scenario::ScheduleCache::kDefaultBytes;
};

struct RunSummary {
  size_t points = 0;
  size_t already_done = 0;  // rows found in the journal
  size_t evaluated = 0;     // rows added by this run
  size_t ok = 0, skipped = 0, errors = 0;  // over all rows so far
  bool complete = false;
  double wall_s = 0;
  std::string inputs_hash;
  std::vector<std::string> written;  // files written (rank 0)
  std::string journal;               // DIR/journal.jsonl
  int stopped_by_signal = 0;         // SIGINT or SIGTERM stopped it early (stop_on_signals)
  scenario::ScheduleCache::Stats schedules;  // this rank's schedule cache, at the end
};

// Reads the spec on rank 0 (and shares its text), runs, writes on rank 0. Every rank returns
// the summary (the counts are rank 0's). Topology files the spec names must be readable on
// every rank (a shared file system, or the same paths on every machine).
RunSummary run_sweep(const std::string& spec_path, const RunOptions& options, Communicator& communicator);

}  // namespace tessera::sweep
