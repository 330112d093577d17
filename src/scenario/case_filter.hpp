#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace re2 {
class RE2;
}

namespace pathbench {

// RE2 may use at most this much memory for one filter (compiled program and DFA cache). A pattern
// that needs more is refused as bad input; an alternation of a thousand quoted case ids (what the
// gate's re-run passes) needs about 1 MiB.
inline constexpr std::int64_t kCaseFilterMaxMemBytes = std::int64_t{32} << 20;

// `--filter REGEX` (run, list): keeps the cases whose id the pattern matches somewhere (a partial
// match, like std::regex_search), in RE2 syntax (https://github.com/google/re2/wiki/Syntax). RE2
// matches in time linear in the id, so no pattern can hang the run ("(a*)*b" included); it has
// no backreferences and no lookaround.
class CaseFilter {
 public:
  // An empty pattern keeps every case. Throws InputError::option(option, RE2's message) when the
  // pattern is not valid or needs more than kCaseFilterMaxMemBytes.
  explicit CaseFilter(const std::string& pattern, const std::string& option = "--filter");
  ~CaseFilter();
  CaseFilter(CaseFilter&&) noexcept;
  CaseFilter& operator=(CaseFilter&&) noexcept;

  // Whether a pattern was given (false: every id matches).
  explicit operator bool() const { return re_ != nullptr; }
  const std::string& pattern() const { return pattern_; }
  bool matches(const std::string& id) const;

  // A pattern matching exactly these ids and nothing else: "^(?:id1|id2)$", each id quoted with
  // RE2::QuoteMeta (every character but [A-Za-z0-9_] escaped).
  static std::string exact_ids_pattern(const std::vector<std::string>& ids);

 private:
  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace pathbench
