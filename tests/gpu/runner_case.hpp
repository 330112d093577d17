#pragma once

// One case of a family run by the CLI's own CaseRunner (requirements, prepare, warm-up, Google
// Benchmark repetitions with a verify after each, checks, the timing check, a case's own
// timeline), for the families' GPU tests: what a test asserts is what `pathbench run` records.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "inventory/machine.hpp"
#include "measure/case_runner.hpp"
#include "measure/family.hpp"
#include "measure/progress.hpp"
#include "result/result.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

struct MeasuredCase {
  CaseResult result;
  std::vector<MetricResult> metrics;         // as recorded (empty when the case did not run)
  std::vector<std::vector<double>> samples;  // each repetition's values, in metrics order
  std::vector<Check> checks;
  std::string method;  // the result's timing_method
  std::uint64_t operations_per_sample = 0;
  std::string skipped;  // the reason, when the runner skipped the case (requirements or prepare)

  // The recorded median of a metric (the result's stats); a failure when there is no such metric.
  double median(const std::string& name) const {
    for (const auto& m : metrics) {
      if (m.name == name) return m.stats.median;
    }
    ADD_FAILURE() << "no metric " << name;
    return 0;
  }
  // The check of that name, else null.
  const Check* check(const std::string& name) const {
    for (const auto& c : checks) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
};

inline std::string timing_name(TimingMethod m) { return std::string(to_string(m)); }

// Runs `spec` with `repetitions` samples. A case the runner failed is a test failure (its reason
// printed); a skipped one comes back with `skipped` set and no samples.
inline MeasuredCase run_case(const Family& family, CaseSpec spec, const Machine& machine,
                             int repetitions = 3, int device = 0) {
  EXPECT_FALSE(family.case_error(spec).has_value()) << spec.id;
  spec.repetitions = repetitions;
  RunSettings settings;
  settings.device = device;
  // Where a family that captures its own timeline (overlap, unified_memory) writes the trace.
  settings.default_timeline_dir = std::filesystem::temp_directory_path() / "pathbench-gpu-tests";
  std::filesystem::create_directories(settings.default_timeline_dir);
  Progress progress(1, false);
  CaseRunner runner(machine, settings, progress);
  MeasuredCase m;
  m.result = runner.run(spec, family);
  if (m.result.status == CaseStatus::kSkipped) {
    m.skipped = m.result.reason.empty() ? "skipped without a reason" : m.result.reason;
    return m;
  }
  EXPECT_EQ(m.result.status, CaseStatus::kOk) << spec.id << ": " << m.result.reason;
  m.metrics = m.result.metrics;
  m.checks = m.result.checks;
  m.method = m.result.timing_method;
  m.operations_per_sample = m.result.operations_per_sample;
  const std::size_t n = m.metrics.empty() ? 0 : m.metrics.front().samples.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> values;
    for (const auto& metric : m.metrics) values.push_back(metric.samples.at(i));
    m.samples.push_back(std::move(values));
  }
  return m;
}

}  // namespace pathbench
