#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

#include "result/result.hpp"

namespace pathbench {

// A run's result on disk while the run grows it. Saving the whole result after every case made a
// long sweep quadratic (16k skipped cases took half an hour); instead every finished case is
// appended to a journal beside the result, `.<name>.journal` (one JSON line per case, no rewrite),
// and the result itself is rewritten atomically only now and then — at most a small share of the
// run's time — and once at the end, when the journal goes away. A run killed at any moment leaves
// a valid result (complete: false) plus the journal; load_result folds the journal's cases in, so
// every case reported finished is there.
//
// The journal is also the output's lock: a second run on the same output is refused (exit 3)
// naming the first one's PID.
class RunRecord {
 public:
  // Takes the lock, then saves `header` (marked incomplete; it may already hold cases, when a
  // run is resumed) and starts the journal. InputError when another run holds the output or it
  // cannot be written; DiskFull when the disk is full.
  RunRecord(std::filesystem::path out, Result header);
  RunRecord(const RunRecord&) = delete;
  RunRecord& operator=(const RunRecord&) = delete;
  // Releases the lock. Without finish() the journal stays for load_result to fold.
  ~RunRecord();

  // Appends the finished case to the journal at once and saves the result when a save is due.
  void add(CaseResult c);
  Result& result() { return result_; }
  const std::filesystem::path& path() const { return out_; }

  // The final save: end time now, `complete` as given (with the reason when incomplete); the
  // journal is removed once the result holds every case.
  void finish(bool complete, const std::string& incomplete_reason = {});

 private:
  void save();
  void append_to_journal(const std::string& line);
  std::filesystem::path out_;
  std::filesystem::path journal_;
  int journal_fd_ = -1;
  Result result_;
  std::chrono::steady_clock::time_point last_save_;
  std::chrono::steady_clock::duration last_save_cost_{};
  bool finished_ = false;
};

// `.<name>.journal` beside the result (symbolic links followed).
std::filesystem::path journal_path(const std::filesystem::path& result_path);

// Adds to an incomplete `r` the cases the journal of the same run recorded after the result's
// last save; returns how many. A journal of another run, or none, adds nothing; a line cut short
// by a kill is ignored.
std::size_t fold_journal(Result& r, const std::filesystem::path& result_path);
// The journal's cases of the same run as `header` (incomplete), in the order they finished, for a
// reader that streams cases; the caller drops those it already has. The journal is read line by
// line (never whole); a line cut short at the end (a kill mid-write) is ignored. A journal that is
// there but cannot be trusted is an InputError naming it (and the result), with what is wrong: not
// a regular file (a FIFO, a device, a symlink loop), unreadable, a line longer than
// kMaxJournalLineBytes, a whole line that is not JSON or not a valid case, a first line that is no
// journal header.
inline constexpr std::size_t kMaxJournalLineBytes = std::size_t{64} << 20;
void for_each_journal_case(const Result& header, const std::filesystem::path& result_path,
                           const std::function<void(CaseResult&&)>& on_case);

}  // namespace pathbench
