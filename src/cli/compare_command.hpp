#pragma once

#include <string>
#include <vector>

namespace pathbench::cli {

// Options the compare and gate commands share.
struct JudgeCliOptions {
  double alpha = 0.05;
  double threshold_pct = 5.0;
  double k = 3.0;  // --spread-k
  double floor_fraction = 0.80;
  double nvlink_floor_fraction = 0.80;  // --nvlink-floor: share of N links x per-link rate
  bool allow_noisy = false;
  bool allow_few_samples = false;
  std::string json_out;
  std::string junit_out;
};

struct CompareCliOptions : JudgeCliOptions {
  std::vector<std::string> files;  // BASELINE RESULT, or RESULT with --floors
  bool floors_only = false;
  bool across = false;
};

int compare_command(const CompareCliOptions& options);

struct GateCliOptions : JudgeCliOptions {
  std::string result;
  std::string baselines = "ci/baselines";
  int confirm = 2;        // re-runs of the suspect cases
  std::string rerun_dir;  // default: <result>.reruns/ beside the result
  int rerun_timeout_s = 3600;
};

// Compares RESULT with its node type's baseline, re-runs the suspects `confirm` times in fresh
// processes and reports a regression only when the majority of all runs show it.
int gate_command(const GateCliOptions& options);

struct BaselineCliOptions {
  std::vector<std::string> results;
  std::string dir = "ci/baselines";
  bool force = false;
  bool allow_noisy = false;
};

// Writes a pathbench.baseline/v1 from one or more results to <dir>/<node-type label>.json.
int baseline_promote_command(const BaselineCliOptions& options);
// Prints the baseline path a result would be compared with (exit 2 when there is none yet).
int baseline_path_command(const BaselineCliOptions& options);

}  // namespace pathbench::cli
