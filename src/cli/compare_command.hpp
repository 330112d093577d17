#pragma once

#include <string>
#include <vector>

namespace pathbench::cli {

struct CompareCliOptions {
  std::vector<std::string> files;  // BASELINE RESULT, or RESULT with --floors
  bool floors_only = false;
  bool across = false;
  double alpha = 0.05;
  double threshold_pct = 5.0;
  double floor_fraction = 0.80;
  double nvlink_floor_fraction = 0.80;  // --nvlink-floor: share of N links x per-link rate
  std::string json_out;
  std::string junit_out;
};

int compare_command(const CompareCliOptions& options);

struct BaselineCliOptions {
  std::string result;
  std::string dir = "ci/baselines";
  bool force = false;
};

// Copies a result to <dir>/<node-type label>.json after checking it has no failed case.
int baseline_promote_command(const BaselineCliOptions& options);
// Prints the baseline path a result would be compared with (exit 2 when there is none yet).
int baseline_path_command(const BaselineCliOptions& options);

}  // namespace pathbench::cli
