#pragma once
// SIGINT and SIGTERM as a request to stop a sweep cleanly: while a StopSignals is installed, the
// first of them only sets a flag (the runner then starts no new point, journals the ones in
// flight, writes the tables and says how to resume); the handler resets itself, so a second
// signal ends the process at once, which the journal survives as it survives SIGKILL.
namespace tessera::sweep {

class StopSignals {
 public:
  explicit StopSignals(bool install);
  ~StopSignals();  // the previous handlers again
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The signal received since installation (SIGINT or SIGTERM), 0 when none.
  int received() const;

 private:
  bool installed_ = false;
};

}  // namespace tessera::sweep
