#pragma once

// One case of a family run by the CLI's own CaseRunner (requirements, prepare, warm-up, Google
// Benchmark repetitions with a verify after each, checks, the timing check, a case's own
// timeline), for the families' GPU tests: what a test asserts is what `pathbench run` records.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "inventory/inventory.hpp"
#include "inventory/machine.hpp"
#include "measure/case_runner.hpp"
#include "measure/family.hpp"
#include "measure/progress.hpp"
#include "result/result.hpp"
#include "scenario/expansion.hpp"
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

// A case of `family` with these parameters, as a scenario named "test" would expand it, with a
// short min_time (the tests measure a few samples, not a figure).
inline CaseSpec gpu_test_case(const std::string& family, nlohmann::ordered_json params,
                              int repetitions = 3) {
  CaseSpec spec;
  spec.family = family;
  spec.scenario = "test";
  spec.params = std::move(params);
  spec.id = case_id(family, spec.params);
  spec.min_time = 0.01;
  spec.repetitions = repetitions;
  return spec;
}

// Runs `spec` on this machine's inventory. The family's requirements must hold here (a GPU
// machine meets them): a requirement skip is a test failure; only prepare may still skip, and
// then `skipped` says why.
inline MeasuredCase run_required(const Family& family, const CaseSpec& spec, int repetitions = 3) {
  const Machine machine = machine_from(collect_inventory({}));
  if (auto why = family.skip_reason(spec, machine, 0)) {
    ADD_FAILURE() << "unexpected skip of " << spec.id << ": " << *why;
    return {};
  }
  return run_case(family, spec, machine, repetitions);
}

// Every check the case recorded passed (and it recorded some).
inline void expect_checks_pass(const MeasuredCase& m) {
  ASSERT_FALSE(m.checks.empty()) << m.result.id;
  for (const auto& c : m.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

}  // namespace pathbench

// A case that prepare skipped (a device that cannot do what it needs) is a skipped test, saying
// why.
#define PATHBENCH_SKIP_IF_SKIPPED(m) \
  if (!(m).skipped.empty()) GTEST_SKIP() << (m).skipped
