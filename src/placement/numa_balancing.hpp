#pragma once

// Automatic NUMA balancing (/proc/sys/kernel/numa_balancing) set for one case and put back after
// it: the kernel migrates pages toward the node whose CPUs touch them, so whether it is on
// changes what remote memory costs over time. System-wide: only with the run's consent
// (Requirements::numa_balancing_change).

#include <filesystem>
#include <string>

#include "result/vocabulary.hpp"

namespace pathbench {

class NumaBalancingScope {
 public:
  // Writes `value` (0 or 1) and remembers the value before. Throws SkipCase when the file cannot
  // be read or written (not root), naming it.
  explicit NumaBalancingScope(int value, std::filesystem::path root = "/");
  NumaBalancingScope(const NumaBalancingScope&) = delete;
  NumaBalancingScope& operator=(const NumaBalancingScope&) = delete;
  ~NumaBalancingScope();  // restores the value before

  int previous() const { return previous_; }
  // "numa_balancing": what the case ran with and what it will be put back to; fails when the
  // setting was changed under the case (read back differs).
  Check check() const;

 private:
  std::filesystem::path root_, file_;
  int value_ = 0;
  int previous_ = 0;
};

}  // namespace pathbench
