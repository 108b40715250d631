#include "stop_signals.hpp"

#include <signal.h>

#include <atomic>
#include <utility>

namespace tessera::sweep {

namespace {

std::atomic<int> received_signal{0};  // lock-free: safe to store from a signal handler
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction previous_int, previous_term;

void on_stop_signal(int signal_number) { received_signal.store(signal_number); }

}  // namespace

StopSignals::StopSignals(bool install) : installed_(install) {
  received_signal.store(0);
  if (!installed_) return;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_RESTART;  // once: a second signal takes its default action
  // A signal ignored when the process started (nohup, a background job of a script) stays
  // ignored, as every Unix tool leaves it.
  for (auto [signal_number, previous] : {std::pair{SIGINT, &previous_int}, std::pair{SIGTERM, &previous_term}}) {
    sigaction(signal_number, nullptr, previous);
    if (previous->sa_handler != SIG_IGN) sigaction(signal_number, &action, nullptr);
  }
}

StopSignals::~StopSignals() {
  if (!installed_) return;
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int StopSignals::received() const { return received_signal.load(); }

}  // namespace tessera::sweep
