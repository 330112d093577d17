#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/floors.hpp"
#include "result/result.hpp"

namespace pathbench {

inline constexpr const char* kCompareSchema = "pathbench.compare/v1";

enum class Verdict {
  kPass,
  kRegression,
  kImprovement,
  kNoise,
  kMissing,
  kNew,
  kSkipped,
  kFailed,
  kAcross
};
std::string_view to_string(Verdict v);
// Worst first: the order the table and the gate read verdicts in.
int severity(Verdict v);

struct CompareOptions {
  double alpha = 0.05;
  double default_threshold_pct = 5.0;
  std::size_t min_samples = 5;  // below this on either side no statistical verdict is given
  bool across = false;          // compare different node types: ratios, no verdicts
  FloorOptions floors;
};

struct MetricComparison {
  std::string name, unit;
  Better better = Better::kHigher;
  Verdict verdict = Verdict::kPass;
  double baseline_median = 0, result_median = 0;
  double change_pct = 0;  // (result - baseline) / baseline x 100
  double ratio = 0;       // result / baseline
  double threshold_pct = 0;
  std::optional<double> p_value;
  std::size_t n_baseline = 0, n_result = 0;
  std::string reason;
};

struct CaseComparison {
  std::string id, family;
  Verdict verdict = Verdict::kPass;
  std::string reason;
  std::vector<MetricComparison> metrics;
};

struct ResultRef {
  std::string file, node_type, topology_fingerprint, hostname, start_time;
};

struct Comparison {
  bool across = false;
  bool floors_only = false;
  ResultRef baseline, result;
  double alpha = 0, default_threshold_pct = 0;
  std::vector<CaseComparison> cases;  // worst first
  std::vector<FloorCheck> floors;
  std::vector<std::string> incomparable;  // why the two results cannot be gated against each other
  int exit_code = 0;
};

// Fields that differ between two results' node identities (node type and the topology facts
// behind the fingerprint), one human line each. Empty when they are the same kind of node.
std::vector<std::string> identity_differences(const Result& baseline, const Result& result);

// Matches cases by id and gives each a verdict (see README "Gating CI"). Incomparable results
// (different node type or fingerprint, without options.across) get no case verdicts and exit 2.
Comparison compare_results(const Result& baseline, const std::string& baseline_file,
                           const Result& result, const std::string& result_file,
                           const CompareOptions& options);

// Floors alone, for a result without a baseline.
Comparison check_result_floors(const Result& result, const std::string& result_file,
                               const CompareOptions& options);

nlohmann::ordered_json to_json(const Comparison& c);
std::string junit_xml(const Comparison& c);
// The readable table; colours only when `color` (stdout is a terminal).
void print_comparison(const Comparison& c, std::FILE* out, bool color);

}  // namespace pathbench
