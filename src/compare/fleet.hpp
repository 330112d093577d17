#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "result/result.hpp"

// `pathbench fleet`: many nodes' results side by side. Results are grouped by node type and
// topology fingerprint; within a group every gated metric of every case gets the group's median,
// a robust spread and each node's robust z-score, and a node that lies far out on the bad side is
// an outlier. What the outlier's context says differently from the group's majority (driver,
// BIOS, a PCIe link trained low, THP, cpuset alignment, a busy CPU) comes with it.

namespace pathbench {

inline constexpr const char* kFleetSchema = "pathbench.fleet/v1";

struct FleetInput {
  std::string file;
  Result result;
};

struct FleetOptions {
  // A node is an outlier on a metric when its robust z-score on the bad side (against the other
  // nodes' median and spread) exceeds the z limit AND it is worse than the group median by more
  // than the metric's gate threshold: the first keeps a wide-spread metric from flagging its
  // ordinary spread, the second keeps a tight metric (CV 0.3 %) from flagging a move no gate
  // would call a regression. The z limit applied is the larger of z_limit and the prediction
  // limit that an ordinary node exceeds with probability alpha / (nodes of the group): from a
  // handful of nodes the spread is uncertain, and a fixed 3.5 would cry wolf on small groups.
  double z_limit = 3.5;
  double alpha = 0.001;
  // A node is an outlier when at least this many of its metrics are: a degraded data path (a
  // link trained low, contention, memory on the wrong node) moves several cases (every H2D size,
  // pinned and registered), while a single run's tail moves one (on the H200, 3 of 18 unchanged
  // runs had one metric just beyond its gate threshold, docs/measurements.md). A node with fewer
  // is a suspect: listed with its findings, not failing. A failed case is always an outlier.
  std::size_t min_metrics = 2;
  double default_threshold_pct = 5.0;  // for metrics whose case has no gate threshold
  // A group of fewer nodes is listed but not judged: its median and spread mean little.
  std::size_t min_nodes = 3;
  // The spread never counts as less than this share of the median: identical values (MAD 0)
  // would make any difference infinitely many spreads away.
  double min_spread_fraction = 0.001;
  // The CPU was busier during a node's run than the group's median by more than this many
  // percentage points: reported as a difference (another job, a contention injector).
  double busy_difference_points = 20;
};

struct FleetNodeValue {
  std::size_t node = 0;  // index into FleetGroup::nodes
  double value = 0;
  double change_pct = 0;  // against the group median
  double z = 0;           // (value - the other nodes' median) / their spread
  double bad_z = 0;       // z with the sign that makes "worse" positive
  double z_limit = 0;     // the limit applied (FleetOptions::z_limit or the prediction limit)
  bool outlier = false;   // bad_z > z_limit and worse by more than the threshold
  bool ahead = false;     // the same, on the good side (reported, never failing)
};

struct FleetMetric {
  std::string case_id, family, metric, statistic, unit;
  Better better = Better::kHigher;
  double threshold_pct = 0;
  double median = 0;
  double spread = 0;  // scaled MAD of the nodes' values, at least min_spread_fraction x median
  double spread_pct = 0;
  bool spread_floored = false;
  std::vector<FleetNodeValue> values;  // nodes that have the metric, in node order
  std::string label() const;           // "case / metric" or "case / metric p99"
};

// A field of a node's context that differs from what most other nodes of its group have.
struct FleetDifference {
  std::string field, label;
  std::string node_value, majority_value;
  std::size_t majority_count = 0;  // how many other nodes have majority_value
  std::size_t others = 0;          // how many other nodes there are
  std::string text() const;        // "driver 580.82.07 (group: 580.159.04 on 7 of 8)"
};

struct FleetNode {
  std::string label;  // hostname, or the file's stem where hostnames repeat
  std::string file, hostname;
  bool outlier = false;
  bool suspect = false;                   // some metric is an outlier, fewer than min_metrics
  std::size_t outlier_metrics = 0;        // how many metrics are
  double worst_bad_z = 0;                 // over the judged metrics
  std::vector<std::string> findings;      // why it is an outlier (or ahead), worst first
  std::vector<std::string> failed_cases;  // "id: reason"; a failed case makes an outlier
  std::vector<std::string> notes;         // incomplete run, noise, cases missing on this node
  std::vector<FleetDifference> differences;
};

struct FleetGroup {
  std::string node_type, topology_fingerprint;
  std::vector<FleetNode> nodes;  // outliers first, then by label
  std::vector<FleetMetric> metrics;
  bool judged = false;
  std::string reason;  // why not judged
  std::size_t outliers() const;
};

// One gated metric's group medians side by side, one column per group (node-type comparison).
struct FleetNodeTypeRow {
  std::string case_id, metric, statistic, unit;
  Better better = Better::kHigher;
  std::vector<std::optional<double>> medians;  // per group, in FleetReport::groups order
};

struct FleetReport {
  FleetOptions options;
  std::vector<FleetGroup> groups;
  std::vector<FleetNodeTypeRow> node_types;  // only where at least two groups have the metric
  std::size_t outliers() const;
  bool judged() const;  // some group had enough nodes
};

// Throws InputError naming the file and field when a result's context is malformed.
FleetReport analyze_fleet(const std::vector<FleetInput>& inputs, const FleetOptions& options);

// 0: no outlier; 1: an outlier node; 2: no group had enough nodes to be judged.
int exit_code_of(const FleetReport& report);

}  // namespace pathbench
