#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compare/baseline.hpp"
#include "result/result.hpp"

namespace pathbench {

// How many runs `baseline update` keeps by default: the newest 20. The between-run spread of 20
// run medians is known to about ±16 % (one standard error of a standard deviation, 1/√(2(n−1)))
// against ±35 % from the five of a first promotion, while a baseline that only grew would keep
// judging the node by runs from before its last slow drift or firmware change.
inline constexpr std::size_t kDefaultBaselineKeep = 20;

struct BaselineUpdate {
  // The newest `keep` runs, built as promoting them would build it: between-run statistics, case
  // descriptions and the newest context all from the kept runs.
  Baseline baseline;
  std::vector<BaselineRunRef> added;    // results now in the baseline, oldest first
  std::vector<BaselineRunRef> dropped;  // runs of the baseline beyond the newest `keep`
  std::vector<BaselineRunRef> too_old;  // results checked but older than the newest `keep` runs
};

// `baseline` (read from `baseline_file`) with `results` (read from `files`) added, keeping the
// newest `keep` >= 1 runs by start time. Every run, the baseline's own included, is checked as
// build_baseline checks a promotion and refused with the same PromoteError, so a result that is a
// run the baseline already holds is one run given twice. A run of the baseline is named in
// messages as "BASELINE_FILE run N (ITS FILE)"; its JSON pointer is the one its result file had.
BaselineUpdate update_baseline(const Baseline& baseline, const std::string& baseline_file,
                               std::vector<Result> results, const std::vector<std::string>& files,
                               std::size_t keep, const PromoteOptions& options);

}  // namespace pathbench
