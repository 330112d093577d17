#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace pathbench {

// How a child process ended. `kNotFound` is separate from `kSpawnFailed` because an absent tool
// (no nvidia-smi on a CPU-only node) is an expected condition, not an error.
enum class SubprocessOutcome {
  kExited,       // ran to completion; see exit_status
  kSignaled,     // killed by a signal it did not ask for; see signal
  kTimedOut,     // still running at the deadline; it (and its process group) got SIGKILL
  kNotFound,     // argv[0] is not on PATH (ENOENT)
  kSpawnFailed,  // could not be started for another reason (EACCES, EAGAIN, ...)
};

struct SubprocessResult {
  SubprocessOutcome outcome = SubprocessOutcome::kSpawnFailed;
  int exit_status = -1;  // valid when outcome == kExited
  int signal = 0;        // valid when outcome == kSignaled
  std::string stdout_text;
  std::string stderr_text;  // empty unless SubprocessOptions::capture_stderr
  bool stdout_truncated = false;
  std::string error;  // human sentence for every outcome other than a zero exit

  bool ok() const { return outcome == SubprocessOutcome::kExited && exit_status == 0; }
};

struct SubprocessOptions {
  std::chrono::milliseconds timeout{10'000};
  // A runaway child must not exhaust our memory; output beyond this is read and dropped.
  std::size_t max_output_bytes = 16u << 20;
  bool capture_stderr = true;  // false: the child's stderr goes to /dev/null
};

// Runs argv[0] (looked up on PATH) with exactly these arguments: no shell is involved, so
// nothing in argv is ever interpreted. stdin is /dev/null. Never throws for child failures;
// throws std::invalid_argument for an empty argv and SystemError when pipes cannot be made.
SubprocessResult run_subprocess(const std::vector<std::string>& argv,
                                const SubprocessOptions& options = {});

}  // namespace pathbench
