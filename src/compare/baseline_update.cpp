#include "compare/baseline_update.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "result/run_context.hpp"
#include "stats/operation_distribution.hpp"

// `baseline update`: a baseline's runs become the results build_baseline takes again, so adding
// runs is one more promotion, with its checks and its merging, not a second implementation.

namespace pathbench {

namespace {

// Run `run` of a baseline as the result it was built from, as far as building reads one: cases,
// each metric's samples, median and per-repetition statistics, and the run's times. The rest of a
// result file (checks, elapsed times, histograms) never went into a baseline.
Result result_of_run(const Baseline& b, std::size_t run) {
  Result r;
  r.start_time = b.runs[run].start_time;
  r.end_time = b.runs[run].end_time;
  r.cases.reserve(b.cases.size());
  for (const BaselineCase& bc : b.cases) {
    CaseResult& c = r.cases.emplace_back();
    c.id = bc.id;
    c.scenario = bc.scenario;
    c.family = bc.family;
    c.params = bc.params;
    c.timing_method = bc.timing_method;
    c.status = bc.status;
    c.reason = bc.reason;
    c.gate = bc.gate;
    c.metrics.reserve(bc.metrics.size());
    for (const BaselineMetric& bm : bc.metrics) {
      const BaselineRun& from = bm.runs.at(run);
      MetricResult& m = c.metrics.emplace_back();
      m.name = bm.name;
      m.unit = bm.unit;
      m.better = bm.better;
      m.samples = from.samples;
      m.stats.median = from.median;
      // A baseline holds every statistic per repetition or none (baseline_file.cpp).
      if (from.per_repetition.size() == kDistributionStatistics.size()) {
        m.distribution.emplace();
        std::copy(from.per_repetition.begin(), from.per_repetition.end(),
                  m.distribution->per_repetition.begin());
      }
    }
  }
  return r;
}

}  // namespace

BaselineUpdate update_baseline(const Baseline& baseline, const std::string& baseline_file,
                               std::vector<Result> results, const std::vector<std::string>& files,
                               std::size_t keep, const PromoteOptions& options) {
  if (keep == 0) throw std::invalid_argument("update_baseline: keep must be at least 1");
  if (files.size() != results.size()) {
    throw std::invalid_argument("update_baseline: one file name per result");
  }
  std::vector<Result> runs;
  std::vector<std::string> names;
  std::vector<RunContext> contexts;
  // The name a run of the baseline goes by in messages -> the file name the baseline keeps for it.
  std::map<std::string, std::string> own_files;
  // The baseline's runs first: its first run is what a result's node type and topology are held
  // to, and the messages name it.
  for (std::size_t i = 0; i < baseline.runs.size(); ++i) {
    runs.push_back(result_of_run(baseline, i));
    names.push_back(baseline_file + " run " + std::to_string(i + 1) + " (" + baseline.runs[i].file +
                    ")");
    contexts.push_back(baseline.run_contexts.at(i));
    own_files.emplace(names.back(), baseline.runs[i].file);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    contexts.push_back(RunContext::from_json(context_json(results[i]), files[i]));
    runs.push_back(std::move(results[i]));
    names.push_back(files[i]);
  }

  // Checked as one promotion of every run, those about to be dropped included: a result too old
  // to be kept is refused all the same when it is no baseline material, so that what update
  // accepts does not depend on how old a run is.
  Baseline all = build_baseline(runs, names, contexts, options);
  BaselineUpdate update;
  const std::size_t drop = all.runs.size() > keep ? all.runs.size() - keep : 0;
  for (std::size_t j = 0; j < drop; ++j) {
    const auto own = own_files.find(all.runs[j].file);
    if (own == own_files.end()) {
      update.too_old.push_back(all.runs[j]);
    } else {
      update.dropped.push_back(all.runs[j]);
      update.dropped.back().file = own->second;
    }
  }
  if (drop == 0) {
    update.baseline = std::move(all);
  } else {
    // Built again from the kept runs alone, so that the baseline is what promoting them writes
    // (each case described by the oldest kept run), not the whole one with runs cut out. Names
    // are unique: a run of the baseline is named by its position, and build_baseline refused a
    // result given twice.
    std::set<std::string> kept;
    for (std::size_t j = drop; j < all.runs.size(); ++j) kept.insert(all.runs[j].file);
    std::vector<Result> kept_runs;
    std::vector<std::string> kept_names;
    std::vector<RunContext> kept_contexts;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (!kept.contains(names[i])) continue;
      kept_runs.push_back(std::move(runs[i]));
      kept_names.push_back(names[i]);
      kept_contexts.push_back(std::move(contexts[i]));
    }
    if (kept_runs.size() != keep) {
      throw std::logic_error("update_baseline: run names are not unique");
    }
    update.baseline = build_baseline(kept_runs, kept_names, kept_contexts, options);
  }
  for (BaselineRunRef& run : update.baseline.runs) {
    if (const auto own = own_files.find(run.file); own != own_files.end()) {
      run.file = own->second;
    } else {
      update.added.push_back(run);
    }
  }
  return update;
}

}  // namespace pathbench
