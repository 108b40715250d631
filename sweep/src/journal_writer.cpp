#include "tessera/sweep/journal_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "file_io.hpp"
#include "tessera/core/error.hpp"

namespace tessera::sweep {

JournalWriter::JournalWriter(std::string path, JournalSyncPolicy policy)
    : path_(std::move(path)), policy_(policy) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) file_io::fail(path_, "cannot open the journal for writing", errno);
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw UserError(path_ + ": is not a regular file (expected the sweep's journal)");
  }
  length_ = info.st_size;
  file_io::sync_directory_of(path_);  // the journal's name survives a crash too
  flusher_ = std::jthread([this](std::stop_token stop) { flush_periodically(stop); });
}

JournalWriter::~JournalWriter() {
  flusher_.request_stop();
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (failed_errno_ == 0 && unsynced_rows_ > 0) (void)::fdatasync(fd_);
  ::close(fd_);
}

void JournalWriter::append(const std::string& lines, size_t rows) {
  if (lines.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_errno_ != 0) file_io::fail(path_, failed_what_, failed_errno_);
  const int error = file_io::write_all(fd_, lines);
  if (error != 0) {
    // A partial line would be cut by the next run anyway; cutting it now keeps the file whole
    // for whoever reads it first. Shrinking a file needs no space, so this works on a full disk.
    (void)::ftruncate(fd_, length_);
    failed_errno_ = error;
    failed_what_ = "cannot write";
    file_io::fail(path_, failed_what_, error);
  }
  length_ += static_cast<off_t>(lines.size());
  unsynced_rows_ += rows;
  if (unsynced_rows_ >= policy_.every_rows) sync_locked();
}

void JournalWriter::sync() {
  std::lock_guard<std::mutex> lock(mutex_);
  sync_locked();
}

void JournalWriter::sync_locked() {
  if (failed_errno_ != 0) file_io::fail(path_, failed_what_, failed_errno_);
  if (unsynced_rows_ == 0) return;
  if (::fdatasync(fd_) != 0) {
    // After a failed sync the kernel may have dropped the unwritten pages: stop here, so that
    // the next run (which reads what is really on disk) evaluates them again.
    failed_errno_ = errno;
    failed_what_ = "cannot sync the journal to disk";
    file_io::fail(path_, failed_what_, failed_errno_);
  }
  unsynced_rows_ = 0;
}

void JournalWriter::flush_periodically(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop.stop_requested()) {
    wake_.wait_for(lock, stop, policy_.interval, [] { return false; });
    if (stop.stop_requested()) break;
    if (failed_errno_ != 0 || unsynced_rows_ == 0) continue;
    try {
      sync_locked();
    } catch (const UserError&) {
      // Recorded in failed_errno_: the next append or sync reports it on a worker's thread,
      // where the runner handles it. Nothing escapes this thread.
    }
  }
}

}  // namespace tessera::sweep
