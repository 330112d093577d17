#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace pathbench {

// Progress of a run on stderr: "case i of n, current case, repetition, elapsed". Redrawn in place
// on a terminal; silent otherwise so logs and CI output stay clean. Failures are always printed.
class Progress {
 public:
  Progress(std::size_t total_cases, bool interactive, std::FILE* out = stderr);
  static bool stderr_is_terminal();

  void case_started(std::size_t index, const std::string& id);
  void repetition(std::size_t done, std::size_t total);
  void case_failed(const std::string& id, const std::string& reason);
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
