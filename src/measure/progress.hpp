#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace pathbench {

// Progress of a run on stderr: "case i of n, current case, repetition, elapsed". Redrawn in place
// on a terminal; elsewhere (CI logs) one line per finished case, printed once the case is saved,
// so a log shows how far a stopped run got. Failures are always printed with their reason.
class Progress {
 public:
  Progress(std::size_t total_cases, bool interactive, std::FILE* out = stderr);
  static bool stderr_is_terminal();

  void case_started(std::size_t index, const std::string& id);
  void repetition(std::size_t done, std::size_t total);
  void case_failed(const std::string& id, const std::string& reason);
  // After the case is saved: "pathbench: [i/n] ID: STATUS (S s)" outside a terminal.
  void case_finished(const std::string& id, std::string_view status, double seconds);
  void finish();

 private:
  void redraw();
  std::size_t total_;
  bool interactive_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::size_t index_ = 0;
  std::string id_;
  std::size_t rep_done_ = 0, rep_total_ = 0;
};

}  // namespace pathbench
