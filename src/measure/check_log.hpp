#pragma once

// Checks a family records after every sample. The core reads a bench's checks once, after the
// last repetition: a check that failed in any repetition stays failed (with the repetition named)
// so a later passing sample cannot hide it.

#include <algorithm>
#include <string>
#include <vector>

#include "result/vocabulary.hpp"

namespace pathbench {

class CheckLog {
 public:
  void record(std::vector<Check> fresh) {
    ++repetition_;
    for (auto& check : fresh) {
      if (!check.passed) {
        check.detail = "repetition " + std::to_string(repetition_) + ": " + check.detail;
      }
      const auto same = std::find_if(checks_.begin(), checks_.end(),
                                     [&](const Check& c) { return c.name == check.name; });
      if (same == checks_.end()) {
        checks_.push_back(std::move(check));
      } else if (same->passed) {
        *same = std::move(check);
      }
    }
  }
  const std::vector<Check>& checks() const { return checks_; }

 private:
  int repetition_ = 0;
  std::vector<Check> checks_;
};

}  // namespace pathbench
