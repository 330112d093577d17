#pragma once

#include <signal.h>

#include <chrono>
#include <optional>

namespace pathbench {

// Turns SIGINT and SIGTERM into a stop request the main thread can wait for, with a timeout, for
// the scope's lifetime; the previous handlers come back on destruction. A handler (not a blocked
// signal read with sigwait) because libraries start threads of their own (the CUDA driver does)
// that would otherwise receive the signal with its default action and kill the process. The
// handler only writes the signal number to a pipe (async-signal-safe); one instance at a time.
class StopSignals {
 public:
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  // Waits until `deadline` or a signal, whichever comes first; the signal number, or nothing
  // when the deadline passed. A signal that arrived earlier is returned at once.
  std::optional<int> wait_until(std::chrono::steady_clock::time_point deadline);

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace pathbench
