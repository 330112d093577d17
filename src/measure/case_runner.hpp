#pragma once

#include <benchmark/benchmark.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/machine.hpp"
#include "measure/family.hpp"
#include "measure/progress.hpp"
#include "result/result.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

struct RunSettings {
  int device = 0;
  // run --timeline DIR: every case also runs one untimed sample under a CUPTI capture, whose
  // Chrome trace goes here and whose analysis adds checks.
  std::optional<std::filesystem::path> timeline_dir;
  // Where the traces of cases that capture a timeline themselves go without --timeline.
  std::filesystem::path default_timeline_dir = "timelines";
};

// The one measurement core every family goes through: prepares a case, warms it up, registers it
// with Google Benchmark (manual time, one iteration per repetition, each repetition one sample),
// verifies after every sample, and turns everything into a CaseResult. Exceptions never escape:
// a case that throws is recorded as failed (or skipped) and the run goes on.
class CaseRunner {
 public:
  CaseRunner(const Machine& machine, RunSettings settings, Progress& progress);
  CaseResult run(const CaseSpec& spec, const Family& family);
  // Google Benchmark's own record of every repetition (and its aggregates) of the cases run so
  // far, for writing the library's native output beside pathbench's result.
  const std::vector<benchmark::BenchmarkReporter::Run>& benchmark_runs() const { return runs_; }

 private:
  void record_timeline(CaseBench& bench, CaseResult& result);
  std::vector<benchmark::BenchmarkReporter::Run> runs_;
  const Machine& machine_;
  RunSettings settings_;
  Progress& progress_;
};

// Records how the samples were timed as the case's `timing` check (every case has one).
void add_timing_check(const CaseBench& bench, CaseResult& result);

// Fails the case when any check did not pass (the measurement would claim something untrue).
void apply_checks(CaseResult& result);

}  // namespace pathbench
