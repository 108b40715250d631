#pragma once
// The journal of a running sweep, held open for appending (DIR/journal.jsonl; its format and
// its reading back are results.hpp's Journal).
//
// How much a crash loses. A killed process loses nothing that was appended: each line goes to
// the kernel in one write(2), and the next run cuts off a line torn by a kill in the middle of
// a write. A machine crash (power cut, kernel panic) loses what the kernel had not yet put on
// disk, so the writer syncs (fdatasync) at a bounded interval: after every `every_rows` rows,
// and at the latest `interval` after a row was appended (a background thread), whichever comes
// first, and once more when it closes. With the defaults a machine crash loses at most the
// points finished in the last second (plus the time one sync takes), and never more than 255
// points; they are evaluated again by the next run. What the crash leaves at the end of the
// file (a torn line, or NUL bytes where unsynced data was) is cut off when the journal is read.
//
// A failed write (a full disk, a file size limit) cuts the file back to its last complete line,
// so the rows already written stay intact, and the writer refuses further appends.
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace tessera::sweep {

struct JournalSyncPolicy {
  size_t every_rows = 256;
  std::chrono::milliseconds interval{1000};
};

class JournalWriter {
 public:
  // Opens (creates) the journal for appending. UserError naming the file when it cannot.
  explicit JournalWriter(std::string path, JournalSyncPolicy policy = {});
  ~JournalWriter();  // syncs and closes; never throws
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends complete lines (`rows` of them) in one write. Thread-safe. UserError naming the
  // file when the write or an earlier background sync failed.
  void append(const std::string& lines, size_t rows);
  // Puts every appended row on disk now. UserError when the disk refuses.
  void sync();
  const std::string& path() const { return path_; }

 private:
  void sync_locked();  // with mutex_ held
  void flush_periodically(std::stop_token stop);

  std::string path_;
  JournalSyncPolicy policy_;
  int fd_ = -1;
  off_t length_ = 0;          // bytes of complete lines in the file
  size_t unsynced_rows_ = 0;  // rows appended since the last sync
  int failed_errno_ = 0;      // a failed write or sync: no more appends
  std::string failed_what_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread flusher_;  // last: stopped and joined first
};

}  // namespace tessera::sweep
