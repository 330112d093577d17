#include "measure/progress.hpp"
#include "core/text.hpp"

#include <unistd.h>

namespace pathbench {

Progress::Progress(std::size_t total_cases, bool interactive, std::FILE* out)
    : total_(total_cases),
      interactive_(interactive),
      out_(out),
      start_(std::chrono::steady_clock::now()) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::case_started(std::size_t index, const std::string& id) {
  index_ = index;
  id_ = id;
  rep_done_ = rep_total_ = 0;
  redraw();
}

void Progress::repetition(std::size_t done, std::size_t total) {
  rep_done_ = done;
  rep_total_ = total;
  redraw();
}

void Progress::case_failed(const std::string& id, const std::string& reason) {
  if (interactive_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "pathbench: case failed: %s: %s\n", id.c_str(), reason.c_str());
  redraw();
}

void Progress::case_finished(const std::string& id, std::string_view status, double seconds) {
  if (interactive_) return;
  std::fprintf(out_, "pathbench: [%zu/%zu] %s: %.*s (%.1f s)\n", index_ + 1, total_, id.c_str(),
               static_cast<int>(status.size()), status.data(), seconds);
  std::fflush(out_);
}

void Progress::finish() {
  if (interactive_) std::fputs("\r\033[K", out_);
  std::fflush(out_);
}

void Progress::redraw() {
  if (!interactive_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = concat("[", std::to_string(index_ + 1), "/", std::to_string(total_), "] ", id_);
  if (rep_total_ > 0) {
    line += "  rep " + std::to_string(rep_done_) + "/" + std::to_string(rep_total_);
  }
  char tail[32];
  std::snprintf(tail, sizeof tail, "  %.1fs", elapsed);
  line += tail;
  if (line.size() > 160) line = line.substr(0, 157) + "...";
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
}

}  // namespace pathbench
