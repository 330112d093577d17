#pragma once

#include <string>
#include <vector>

namespace pathbench::cli {

struct FleetCliOptions {
  std::vector<std::string> inputs;  // result files, or directories holding them
  std::string json_out, junit_out, html_out;
  double z_limit = 3.5;
  double alpha = 0.001;
  double threshold_pct = 5.0;
  int min_nodes = 3;
  int min_metrics = 2;
};

// Groups the results by node type and topology, flags the outlier nodes of each group (exit 1;
// 0 none; 2 no group large enough to judge; 3 bad input, nothing written).
int fleet_command(const FleetCliOptions& options);

}  // namespace pathbench::cli
