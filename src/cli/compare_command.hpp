#pragma once

#include <string>
#include <vector>

#include "compare/baseline_update.hpp"

namespace pathbench::cli {

// Options the compare and gate commands share.
struct JudgeCliOptions {
  double alpha = 0.05;
  double threshold_pct = 0;   // a ceiling for metrics whose gate block sets none; 0: class ceilings
  int min_runs_host = 8;      // baseline runs a host-timed (heavy-tailed) metric needs to be gated
  int min_machines_host = 3;  // and the machines they must come from
  double k = 3.0;             // --spread-k
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
  int confirm = -1;           // re-runs of the suspect cases; -1: sized to false_alarm
  double false_alarm = 0.01;  // the chance an unchanged node may fail the gate
  std::string rerun_dir;      // default: <result>.reruns/ beside the result
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

struct BaselineUpdateCliOptions {
  std::string baseline;
  std::vector<std::string> results;
  int keep = static_cast<int>(kDefaultBaselineKeep);
  bool allow_noisy = false;
};

// Adds results to an existing baseline file, keeps its newest `keep` runs and rewrites it
// atomically; refuses (writing nothing) what `baseline promote` refuses, with its exit codes.
int baseline_update_command(const BaselineUpdateCliOptions& options);

}  // namespace pathbench::cli
