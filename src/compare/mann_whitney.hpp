#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace pathbench {

// Two-sided Mann-Whitney U test, computed as scipy.stats.mannwhitneyu(x, y,
// alternative="two-sided", method="auto", use_continuity=True) does, so results can be
// cross-checked against SciPy: exact distribution for small samples without ties, otherwise the
// normal approximation with tie correction and continuity correction.
struct MannWhitneyResult {
  double u1 = 0;       // U statistic of x (SciPy's `statistic`)
  double p_value = 1;  // two-sided
  bool exact = false;  // which method was used
  std::size_t n1 = 0, n2 = 0;
};

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y);

}  // namespace pathbench
