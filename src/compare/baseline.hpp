#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"

namespace pathbench {

inline constexpr const char* kBaselineSchema = "pathbench.baseline/v1";

// How a metric was timed, which decides how much it moves between runs on an unchanged node.
// Device: CUDA events around a latched block (copy engines, kernels). Host: the host's clock
// around work the host waits for (pageable copies, memcpy, page faults, round trips, API cost).
enum class TimingClass { kDevice, kHost };
std::string_view to_string(TimingClass c);
std::optional<TimingClass> parse_timing_class(std::string_view s);
// A metric of a latched case is still host-observed when it is a round trip or a CPU cost.
TimingClass timing_class_of(const CaseResult& c, const std::string& metric);

// One run's view of a metric.
struct BaselineRun {
  BaselineRun() = default;
  BaselineRun(double run_median, std::vector<double> run_samples,
              std::vector<std::vector<double>> run_per_repetition = {})
      : median(run_median),
        samples(std::move(run_samples)),
        per_repetition(std::move(run_per_repetition)) {}
  double median = 0;
  std::vector<double> samples;
  // A per-operation metric's statistics per repetition (OperationDistribution::per_repetition,
  // in kDistributionStatistics order, each list as long as `samples`): what a gate entry with a
  // statistic judges. Empty when the run recorded no distribution of the metric.
  std::vector<std::vector<double>> per_repetition;
};

// Between-run statistics of one metric over the baseline's runs.
struct BetweenRun {
  std::size_t n_runs = 0;
  double center = 0;  // median of the run medians
  // The larger of two estimates of the run medians' standard deviation (same unit as the
  // metric): 1.4826 x MAD (robust: one wild run cannot shrink the gate's view of the others) and
  // the sample standard deviation (efficient: from five runs the MAD alone too often comes out
  // small by chance, and a small spread is what makes a gate cry wolf).
  double spread = 0;
  double spread_mad = 0, spread_sd = 0;
  double spread_pct = 0;  // spread / center x 100
  // The spread is only estimated from at least kMinRunsForSpread runs; below that it is unknown
  // and the gate uses its conservative per-class default.
  bool known = false;
};
inline constexpr std::size_t kMinRunsForSpread = 3;
BetweenRun between_run_of(const std::vector<BaselineRun>& runs);

struct BaselineMetric {
  std::string name, unit;
  Better better = Better::kHigher;
  TimingClass timing_class = TimingClass::kHost;
  std::vector<BaselineRun> runs;  // in the order of Baseline::runs
  BetweenRun between;
  // Every run's samples together: the within-run test compares the result with these.
  std::vector<double> pooled_samples() const;
};

// The metric as the gate judges one statistic of it (a name of kDistributionStatistics, see
// result/gate_block.hpp): each run's per-repetition values of the statistic as its samples,
// their median as its median, and the between-run statistics recomputed from those, so that the
// spread the gate trusts is that statistic's own. Nothing when a run holds no distribution of the
// metric (or the name is not a statistic); `missing_run` then gets the first such run's index.
std::optional<BaselineMetric> statistic_view(const BaselineMetric& m, std::string_view statistic,
                                             std::size_t* missing_run = nullptr);

struct BaselineCase {
  std::string id, scenario, family;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  std::string timing_method;
  CaseStatus status = CaseStatus::kOk;  // ok or skipped (a baseline holds no failed case)
  std::string reason;
  nlohmann::ordered_json gate = nullptr;
  std::vector<BaselineMetric> metrics;
  const BaselineMetric* metric(const std::string& name) const;
};

struct BaselineRunRef {
  std::string file, hostname, start_time, end_time, git_sha;
};

struct Baseline {
  std::string schema = kBaselineSchema;
  std::string node_type, topology_fingerprint, created;
  std::vector<BaselineRunRef> runs;
  // The context of the newest run (as its file holds it: start and end time included): what a
  // comparison's "what changed" is read against.
  RunContext context;
  // Every run's context, in run order (noise is judged on each).
  std::vector<RunContext> run_contexts;
  std::vector<BaselineCase> cases;
  const BaselineCase* find(const std::string& id) const;
};

struct PromoteOptions {
  std::size_t min_samples = 5;  // per metric and run: fewer cannot be tested
  bool allow_noisy = false;     // accept runs taken under noise (inventory/environment.hpp)
};

// Why a set of results cannot become one baseline: the exit code it deserves (2 for results that
// are incomparable with each other, 3 for a result that is no baseline material) and the message.
class PromoteError : public InputError {
 public:
  PromoteError(int exit_code, std::string file, std::string pointer, const std::string& what)
      : InputError(std::move(file), std::move(pointer), what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Builds a baseline from N >= 1 finished results of one node type and topology. Refused
// (PromoteError): a failed case, a run without end_time, a metric with fewer than min_samples
// samples, a case skipped in one run and ok in another, different case sets (exit 3); mixed node
// types or fingerprints, a run taken under noise without allow_noisy (exit 2).
Baseline build_baseline(const std::vector<Result>& results, const std::vector<std::string>& files,
                        const PromoteOptions& options);
// The same with each result's context already read (contexts[i] is results[i]'s): a baseline's
// runs carry theirs as their files held it, and are built again with new results by
// update_baseline (compare/baseline_update.hpp).
Baseline build_baseline(const std::vector<Result>& results, const std::vector<std::string>& files,
                        const std::vector<RunContext>& contexts, const PromoteOptions& options);

// Each run's machine as an index (0, 1, ... in order of first appearance), aligned with
// Baseline::runs. A machine is a host name with its GPUs' UUIDs (cloud VMs of one image share a
// host name; their GPUs do not); the host name alone where the baseline keeps no run contexts.
std::vector<std::size_t> run_machines_of(const Baseline& b);

// A single result read as a one-run baseline (the spread is unknown): older baselines were
// results, and `compare A B` still takes one.
Baseline baseline_from_result(const Result& result, const std::string& file);

nlohmann::ordered_json to_json(const Baseline& b);
Baseline baseline_from_json(const nlohmann::ordered_json& j, const std::string& file);
// Reads either a pathbench.baseline/v1 or a pathbench.result/v1 file.
Baseline load_baseline(const std::filesystem::path& path);
void save_baseline(const std::filesystem::path& path, const Baseline& b);  // atomic

}  // namespace pathbench
