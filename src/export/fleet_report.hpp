#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "compare/fleet.hpp"

// The outputs of `pathbench fleet` (README, "Running on a fleet").

namespace pathbench {

// What the terminal shows: per group its outliers with their findings and differences, then
// every node's worst robust z, then the node-type comparison.
std::string fleet_text(const FleetReport& report);

// pathbench.fleet/v1: the options, per group its nodes (outlier, findings, differences) and
// metrics (median, spread, every node's value, change, z), and the node-type rows.
nlohmann::ordered_json fleet_json(const FleetReport& report);

// One testsuite per group, one testcase per node: an outlier is a failure whose message names
// its worst finding; a group too small to judge marks its nodes skipped.
std::string fleet_junit(const FleetReport& report);

// A self-contained page: per group a nodes x metrics heatmap coloured by the robust z on the bad
// side (outliers first), each outlier's findings and differences, and the node-type table.
std::string fleet_html(const FleetReport& report);

}  // namespace pathbench
