#pragma once

#include <signal.h>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <vector>

namespace pathbench {

// Turns stop signals (SIGINT and SIGTERM by default; a run also takes SIGHUP) into a stop request
// the main thread polls or waits for, for the scope's lifetime; the previous handlers come back
// on destruction. A handler (not a blocked signal read with sigwait) because libraries start
// threads of their own (the CUDA driver does) that would otherwise receive the signal with its
// default action and kill the process. The handler only writes the signal number to a pipe
// (async-signal-safe); one instance at a time.
//
// With `exit_code_on_repeat`, a second stop signal means the user will not wait for the current
// step to end: the handler removes the temporary file of a write in progress (atomic_file.hpp)
// and exits at once with that code. What was already saved stays valid.
class StopSignals {
 public:
  explicit StopSignals(std::initializer_list<int> signals = {SIGINT, SIGTERM},
                       std::optional<int> exit_code_on_repeat = std::nullopt);
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  // Waits until `deadline` or a signal, whichever comes first; the signal number, or nothing
  // when the deadline passed. A signal that arrived earlier is returned at once.
  std::optional<int> wait_until(std::chrono::steady_clock::time_point deadline);
  // The first stop signal received so far, without waiting; it stays reported once received.
  std::optional<int> received();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::optional<int> first_;
  std::vector<std::pair<int, struct sigaction>> previous_;
};

// The first stop signal the current StopSignals instance has received (nothing without one):
// for code deep in a case (a sample loop) that must stop early without holding the instance.
std::optional<int> stop_signal_received() noexcept;

// "SIGINT", "SIGTERM", "SIGHUP", or "signal N".
const char* signal_name(int signal_number) noexcept;

}  // namespace pathbench
